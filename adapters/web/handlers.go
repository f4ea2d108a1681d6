package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
	"github.com/askbridge/askbridge/internal/throttle"
	"github.com/askbridge/askbridge/lifecycle"
)

// pendingPage returns the cards of one page of the pending questions of
// every project the viewer may see, nearest deadline first, and how many
// wait in all. It reads the deadlines index of each project up to the end
// of the page (ids and deadlines only) and loads the page's questions
// alone, so any page of any backlog is cheap.
func (i *Inbox) pendingPage(ctx context.Context, v *viewer, page int) ([]*domain.Question, paging, []string, error) {
	projects, err := i.projects(ctx, v)
	if err != nil {
		return nil, paging{}, nil, err
	}
	type ref struct {
		lifecycle.Deadline
		project string
	}
	// First how many wait (the page asked for may be past the last), then
	// each project's nearest deadlines up to the end of the page.
	total := 0
	for _, p := range projects {
		_, n, err := i.router.Deadlines(ctx, p, 0)
		if err != nil {
			return nil, paging{}, nil, err
		}
		total += n
	}
	pg := makePaging(total, page, func(n int) string { return "/?page=" + strconv.Itoa(n) })
	var refs []ref
	for _, p := range projects {
		if pg.Last == 0 {
			break
		}
		ds, _, err := i.router.Deadlines(ctx, p, pg.Last)
		if err != nil {
			return nil, paging{}, nil, err
		}
		for _, d := range ds {
			refs = append(refs, ref{d, p})
		}
	}
	sort.Slice(refs, func(a, b int) bool {
		if !refs[a].At.Equal(refs[b].At) {
			return refs[a].At.Before(refs[b].At)
		}
		return refs[a].ID < refs[b].ID
	})
	var qs []*domain.Question
	for k := pg.First - 1; pg.First > 0 && k < pg.Last && k < len(refs); k++ {
		q, err := i.router.Question(ctx, refs[k].project, refs[k].ID)
		if domain.ErrorCode(err) == domain.ENotFound {
			continue // gone since the index was read
		}
		if err != nil {
			return nil, paging{}, nil, err
		}
		if q.Status == domain.StatusPending {
			qs = append(qs, q)
		}
	}
	return qs, pg, projects, nil
}

// pending returns every pending question of project p, page by page,
// oldest first.
func (i *Inbox) pending(ctx context.Context, p string) ([]*domain.Question, error) {
	var out []*domain.Question
	q := lifecycle.ListQuery{Status: domain.StatusPending, Limit: lifecycle.MaxListLimit}
	for {
		page, err := i.router.ListPage(ctx, p, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Questions...)
		if q.Cursor = page.Next; q.Cursor == "" {
			return out, nil
		}
	}
}

func (i *Inbox) handleInbox(rq *request) error {
	ctx := rq.r.Context()
	// One page of cards, nearest deadline first: the page stays small
	// however many questions wait, and the heading counts them all.
	qs, pg, projects, err := i.pendingPage(ctx, rq.viewer, pageParam(rq.r.URL.Query()))
	if err != nil {
		return err
	}
	// A batch's calls stand together under its strip (they were asked
	// together, so their deadlines are next to each other).
	qs = groupBatches(qs)
	d := pageData{Title: "Inbox", Viewer: rq.viewer, CSRF: rq.viewer.CSRF, Projects: projects, Origin: origin(rq.r), Total: pg.Total, Paging: pg}
	for _, q := range qs {
		d.Cards = append(d.Cards, i.card(q, nil, rq.viewer, "inbox"))
	}
	batchHeads(d.Cards, rq.viewer)
	d.Flash = i.flash(ctx, rq)
	if pg.Total > 0 {
		d.Title = "Inbox (" + strconv.Itoa(pg.Total) + ")"
	}
	i.render(rq.w, rq.r, "inbox", d)
	return nil
}

// flash describes the outcome of the form the viewer just sent.
func (i *Inbox) flash(ctx context.Context, rq *request) string {
	id := rq.r.URL.Query().Get("done")
	if id == "" || !i.takeFlash(rq, id) {
		// Reloading a page whose ?done= was shown once shows no flash.
		return ""
	}
	q, err := i.locate(ctx, rq.viewer, id)
	if err != nil || q == nil {
		return ""
	}
	what := "Question"
	switch n := len(q.Questions); {
	case n == 1:
		what = "“" + q.Questions[0].Question + "”"
	case n > 1:
		texts := make([]string, n)
		for k, it := range q.Questions {
			texts[k] = "“" + it.Question + "”"
		}
		what = strconv.Itoa(n) + " questions (" + strings.Join(texts, "; ") + ")"
	}
	switch q.Status {
	case domain.StatusAnswered:
		if line := decisionLine(q, "you"); line != "" {
			return "Decided " + what + ": " + line + "."
		}
		if len(q.Questions) < 2 {
			return "Answered " + what + ": " + domain.AnswerLine(q)
		}
		// Several items: each by its text with its answer, so the banner
		// says what every answer was to.
		var parts []string
		for _, it := range q.Questions {
			if a, asked := q.Answers[it.Question]; asked {
				parts = append(parts, "“"+it.Question+"”: "+a)
			}
		}
		return "Answered " + strconv.Itoa(len(q.Questions)) + " questions: " + strings.Join(parts, "; ") + "."
	case domain.StatusCancelled:
		return "Dismissed " + what + "."
	case domain.StatusPending:
		if mine := myVote(q, rq.viewer.Person()); mine != "" {
			return "Your vote for “" + mine + "” on " + what + " was counted: " + domain.TallyLine(q) + "."
		}
	}
	return ""
}

// locate finds a question the viewer may see; nil, nil when it does not
// exist or belongs to a project the viewer may not see (the same answer,
// so ids of other projects are not confirmed).
func (i *Inbox) locate(ctx context.Context, v *viewer, id string) (*domain.Question, error) {
	project, err := i.router.Locate(ctx, id)
	if domain.ErrorCode(err) == domain.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !v.may(project) {
		return nil, nil
	}
	q, err := i.router.Question(ctx, project, id)
	if domain.ErrorCode(err) == domain.ENotFound {
		return nil, nil
	}
	return q, err
}

func (i *Inbox) notFound(rq *request, what string) {
	i.renderStatus(rq.w, rq.r, http.StatusNotFound, "refused", pageData{Title: "Not found", Viewer: rq.viewer, CSRF: rq.viewer.CSRF,
		Error: &pageError{Title: what + " not found",
			Message: "It does not exist, is no longer kept, or belongs to a project you cannot see."}})
}

func (i *Inbox) handleQuestion(rq *request) error {
	ctx := rq.r.Context()
	id := rq.r.PathValue("id")
	q, err := i.locate(ctx, rq.viewer, id)
	if err != nil {
		return err
	}
	if q == nil {
		if rq.r.URL.Query().Get("fragment") != "" {
			http.Error(rq.w, "not found", http.StatusNotFound)
			return nil
		}
		i.notFound(rq, "Question")
		return nil
	}
	if rq.r.URL.Query().Get("fragment") == "card" {
		// Live updates insert the card; it stays unread until opened.
		i.renderCard(rq.w, rq.r, i.card(q, nil, rq.viewer, "inbox"))
		return nil
	}
	c := i.card(q, nil, rq.viewer, "question")
	i.questionBatch(ctx, c, rq.viewer)
	if q.Status == domain.StatusPending && !q.Read && personOpened(rq.r) {
		// Opening the notification's page reads it: the page itself no
		// longer calls it new.
		if _, err := i.router.MarkRead(ctx, q.ProjectID, q.ID); err != nil {
			i.log.Warn("marking notification read failed", "question", q.ID, "err", err)
		} else {
			c.Unread = false
		}
	}
	d := pageData{Title: title(q), Viewer: rq.viewer, CSRF: rq.viewer.CSRF, Card: c}
	d.Flash = i.flash(ctx, rq)
	i.render(rq.w, rq.r, "question", d)
	return nil
}

func title(q *domain.Question) string {
	if len(q.Questions) == 0 {
		return "Question"
	}
	if len(q.Questions) > 1 {
		return cardTitle(q, q.AgentLabel())
	}
	if h := q.Questions[0].Header; h != "" {
		return h
	}
	t := q.Questions[0].Question
	if r := []rune(t); len(r) > 60 {
		t = string(r[:59]) + "…"
	}
	return t
}

func (i *Inbox) handleAnswer(rq *request) error {
	return i.act(rq, func(ctx context.Context, q *domain.Question, who domain.Person) (*domain.Question, error) {
		req, err := answerFromForm(q, rq.r.PostForm)
		if err != nil {
			return nil, err
		}
		return i.router.AnswerRead(ctx, q, req, who)
	})
}

func (i *Inbox) handleDismiss(rq *request) error {
	return i.act(rq, func(ctx context.Context, q *domain.Question, who domain.Person) (*domain.Question, error) {
		return i.router.Cancel(ctx, q.ProjectID, q.ID, domain.CancelUser, &who)
	})
}

// act runs an answer or a dismissal and shows its outcome: a redirect to
// the page the form came from, or that page again with the problem on it.
func (i *Inbox) act(rq *request, do func(context.Context, *domain.Question, domain.Person) (*domain.Question, error)) error {
	ctx := rq.r.Context()
	q, err := i.locate(ctx, rq.viewer, rq.r.PathValue("id"))
	if err != nil {
		return err
	}
	if q == nil {
		i.notFound(rq, "Question")
		return nil
	}
	// Webhook mode: an answer waits inside the Router for the run to pause.
	final, err := do(ctx, q, rq.viewer.Person())
	back := "/"
	switch rq.r.PostForm.Get("return") {
	case "question":
		back = "/questions/" + url.PathEscape(q.ID)
	case "batch":
		if q.BatchID != "" {
			back = "/batches/" + url.PathEscape(q.BatchID)
		}
	}
	if err == nil {
		if _, err := i.router.MarkRead(ctx, final.ProjectID, final.ID); err != nil {
			i.log.Warn("marking notification read failed", "question", final.ID, "err", err)
		}
		i.setFlash(rq.w, rq.r, q.ID)
		http.Redirect(rq.w, rq.r, back+"?done="+url.QueryEscape(q.ID), http.StatusSeeOther)
		return nil
	}
	code := domain.ErrorCode(err)
	if code == domain.EInternal || code == domain.EUnavailable {
		return err
	}
	var ce *domain.Error
	errors.As(err, &ce)
	shown := q
	if final != nil {
		shown = final
	}
	// The words every surface uses (domain.Words), as the page's alert.
	say := words.Refusal(err, shown, rq.viewer.Person())
	pe := &pageError{Title: say.Title, Message: say.Text, Details: ce.Details}
	var kept []string
	if shown.Status.Final() {
		if kept = unsent(shown, rq.r.PostForm); len(kept) > 0 {
			pe.Message += " What you had entered is kept below."
		}
	}
	ret := "inbox"
	if r := rq.r.PostForm.Get("return"); r == "question" || r == "batch" {
		ret = r
	}
	c := i.card(shown, rq.r.PostForm, rq.viewer, ret)
	c.Error = pe
	c.Unsent = kept
	if c.Action != nil {
		c.Action.problem(pe.Details)
	}
	for n := range c.Items {
		for _, d := range pe.Details {
			if d.Field == "answers["+c.Items[n].Item.Question+"]" {
				c.Items[n].Problem = d.Problem
			}
		}
	}
	d := pageData{Title: title(shown), Viewer: rq.viewer, CSRF: rq.viewer.CSRF, Card: c}
	i.renderStatus(rq.w, rq.r, httperr.Status(code), "question", d)
	return nil
}

// unsent describes what a stale form carried, item by item, so nothing
// the person typed is lost.
func unsent(q *domain.Question, form url.Values) []string {
	var out []string
	for n, it := range q.Questions {
		var parts []string
		for _, v := range form["a"+strconv.Itoa(n)] {
			if j, err := strconv.Atoi(strings.TrimPrefix(v, "o")); err == nil && strings.HasPrefix(v, "o") && j >= 0 && j < len(it.Options) {
				parts = append(parts, it.Options[j].Label)
			}
		}
		if t := strings.TrimSpace(form.Get("t" + strconv.Itoa(n))); t != "" {
			parts = append(parts, t)
		}
		if len(parts) > 0 {
			out = append(out, it.Question+" — "+strings.Join(parts, ", "))
		}
	}
	return out
}

// words writes the sentences every surface shows (domain.Words) for the
// web inbox: people with the platform they answered on ("bob (Slack)");
// the templates escape the HTML.
var words = domain.Words{Person: personLabel}

func (i *Inbox) handleRun(rq *request) error {
	ctx := rq.r.Context()
	project, runID := rq.r.PathValue("p"), rq.r.PathValue("run")
	if !rq.viewer.may(project) {
		i.notFound(rq, "Run")
		return nil
	}
	run, err := i.router.Run(ctx, project, runID)
	if err != nil && domain.ErrorCode(err) != domain.ENotFound {
		return err
	}
	qs, err := i.router.RunQuestions(ctx, project, runID)
	if err != nil && domain.ErrorCode(err) != domain.ENotFound {
		return err
	}
	if run == nil && len(qs) == 0 {
		i.notFound(rq, "Run")
		return nil
	}
	rv := &runView{Project: project, ID: runID, Run: run}
	for _, q := range qs {
		c := i.card(q, nil, rq.viewer, "question")
		rv.Questions = append(rv.Questions, c)
	}
	i.render(rq.w, rq.r, "run", pageData{Title: "Run " + runID, Viewer: rq.viewer, CSRF: rq.viewer.CSRF, Run: rv})
	return nil
}

func (i *Inbox) handleLoginPage(rq *request) error {
	next := safeNext(rq.r.URL.Query().Get("next"))
	if rq.viewer != nil && (rq.viewer.Operator || i.cfg.Auth == nil) {
		http.Redirect(rq.w, rq.r, next, http.StatusSeeOther)
		return nil
	}
	i.render(rq.w, rq.r, "login", pageData{Title: "Sign in", CSRF: i.seal.csrf(rq.sess), Next: next})
	return nil
}

func (i *Inbox) handleLogin(rq *request) error {
	next := safeNext(rq.r.PostForm.Get("next"))
	token := strings.TrimSpace(rq.r.PostForm.Get("token"))
	if i.cfg.Auth == nil {
		http.Redirect(rq.w, rq.r, next, http.StatusSeeOther)
		return nil
	}
	addr := throttle.ClientAddr(rq.r)
	if i.cfg.Guesses != nil {
		if err := i.cfg.Guesses.TooMany(addr); err != nil {
			i.slowDown(rq, next, err)
			return nil
		}
	}
	id, _, ok := i.cfg.Auth.Operator(token)
	if token == "" || !ok {
		if i.cfg.Guesses != nil && token != "" {
			if err := i.cfg.Guesses.Failed(addr, token); err != nil {
				i.slowDown(rq, next, err)
				return nil
			}
		}
		i.log.Info("web sign-in refused", "remote", rq.r.RemoteAddr)
		i.renderStatus(rq.w, rq.r, http.StatusUnauthorized, "login", pageData{Title: "Sign in", CSRF: i.seal.csrf(rq.sess), Next: next,
			Error: &pageError{Title: "That token was not accepted", Message: "Check the operator token from the bridge's configuration (operators[].token) and try again."}})
		return nil
	}
	// A new nonce on sign-in: a session (and its CSRF token) from before
	// is not carried over.
	sess, err := newSession(token, time.Now())
	if err != nil {
		return err
	}
	if err := i.setSession(rq.w, rq.r, sess); err != nil {
		return err
	}
	i.log.Info("operator signed in to the web inbox", "operator", id)
	http.Redirect(rq.w, rq.r, next, http.StatusSeeOther)
	return nil
}

func (i *Inbox) handleLogout(rq *request) error {
	// The old cookie stops working everywhere, not just in this browser.
	if err := i.endSession(rq.r.Context(), rq.sess); err != nil {
		return err
	}
	sess, err := newSession("", time.Now())
	if err != nil {
		return err
	}
	if err := i.setSession(rq.w, rq.r, sess); err != nil {
		return err
	}
	to := "/login"
	if !i.cfg.RequireLogin {
		to = "/"
	}
	http.Redirect(rq.w, rq.r, to, http.StatusSeeOther)
	return nil
}

// safeNext keeps redirects after sign-in on this site: only an absolute
// path of this host is followed, anything else goes to "/". Browsers drop
// tabs and line breaks from URLs and read a backslash as a slash, so
// "/\t/evil.example/" would become "//evil.example/": a next holding any
// control character, space or backslash is refused whole.
func safeNext(next string) string {
	if next == "" || next[0] != '/' {
		return "/"
	}
	for _, c := range next {
		if c <= ' ' || c == 0x7f || c == '\\' || c >= 0x80 && c <= 0x9f {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.User != nil ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	return next
}

// origin is the scheme and host the page was requested at.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// personOpened reports whether a GET is a person opening the page from
// this site or the address bar: only then may a GET mark the notification
// read. A navigation another site started (and the bounce that carries
// the session cookie after it, a refresh no person clicked) changes
// nothing. Clients that send no Sec-Fetch headers are not browsers.
func personOpened(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "":
		return true
	case "same-origin", "none":
		return r.Header.Get("Sec-Fetch-User") == "?1"
	}
	return false
}

// slowDown answers a sign-in over its budget of failures: 429 with
// Retry-After, the page saying when to try again.
func (i *Inbox) slowDown(rq *request, next string, err error) {
	var e *domain.Error
	msg := "Too many sign-in attempts failed. Wait a minute and try again."
	if errors.As(err, &e) && e.RetryAfter > 0 {
		rq.w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		msg = fmt.Sprintf("Too many sign-in attempts failed from here or with a token like this one. Try again in %d s.", e.RetryAfter)
	}
	i.log.Warn("web sign-in throttled", "remote", rq.r.RemoteAddr)
	i.renderStatus(rq.w, rq.r, http.StatusTooManyRequests, "login", pageData{Title: "Sign in", CSRF: i.seal.csrf(rq.sess), Next: next,
		Error: &pageError{Title: "Slow down", Message: msg}})
}
