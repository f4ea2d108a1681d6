package email

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/domain"
)

// The pages of a batch mail's Allow all / Deny all links: as every email
// link, GET and HEAD show a confirmation page and decide nothing; only the
// POST of that page (its token matching the cookie set with it) decides,
// through the Router's DecideBatch: every call the mail showed that is
// still waiting, each as its own answer, who may answer checked per call.

// batchLink verifies the link of r and reports whether it is an Allow all
// or Deny all link.
func (a *Adapter) batchLink(r *http.Request) bool {
	tok, err := a.keys.verify(r.PathValue("token"))
	return err == nil && (tok.Choice == AllowAllChoice || tok.Choice == DenyAllChoice)
}

// openedBatch is a verified batch link with its batch and the calls its
// mail showed.
type openedBatch struct {
	tok     token
	project string
	b       *domain.Batch
	calls   []*domain.Question
	pending int
}

// openBatch verifies the batch link and reads its batch. When it returns
// false it has written the refusal page.
func (a *Adapter) openBatch(w http.ResponseWriter, r *http.Request) (openedBatch, bool) {
	tok, err := a.keys.verify(r.PathValue("token"))
	id, n, ok := parseBatchRef(tok.Question)
	if err != nil || !ok {
		a.writePage(w, http.StatusForbidden, pageView{Heading: "This link is not valid",
			Lines: []string{"The link was changed or cut short, so it cannot answer anything. Open it again from the mail, or copy the whole link. Nothing was recorded."}})
		return openedBatch{}, false
	}
	ctx := r.Context()
	project, err := a.core.Locate(ctx, id)
	var b *domain.Batch
	if err == nil {
		b, err = a.core.Batch(ctx, project, id)
	}
	if err != nil {
		if domain.ErrorCode(err) == domain.ENotFound {
			a.writePage(w, http.StatusGone, pageView{Heading: "This batch no longer exists",
				Lines: []string{"It ended long enough ago to be deleted. Nothing was recorded."}})
			return openedBatch{}, false
		}
		a.log.Warn("reading the batch of an email link failed", "err", err)
		a.writePage(w, http.StatusServiceUnavailable, pageView{Heading: "Try again in a moment",
			Lines: []string{"The bridge could not read the batch just now. Nothing was recorded."}})
		return openedBatch{}, false
	}
	o := openedBatch{tok: tok, project: project, b: b}
	for _, q := range b.Questions {
		if len(o.calls) < n && a.sentTo(q, tok.Recipient) {
			o.calls = append(o.calls, q)
			if q.Status == domain.StatusPending {
				o.pending++
			}
		}
	}
	page := batchPage(a.cfg.PublicURL, id)
	switch {
	case len(o.calls) == 0:
		a.writePage(w, http.StatusForbidden, pageView{Heading: "This link is for another address",
			Lines: []string{"The batch was not sent to the address this link was made for. Nothing was recorded."}})
		return openedBatch{}, false
	case o.pending == 0:
		a.writePage(w, http.StatusGone, pageView{Heading: "Every call of this batch is decided",
			Lines: append(callLines(o.calls), "Nothing more to do; nothing was recorded now."), PageLink: page})
		return openedBatch{}, false
	case !a.core.Clock().Now().Before(tok.Expires):
		a.writePage(w, http.StatusGone, pageView{Heading: "This link expired",
			Lines: []string{"It was valid until " + tok.Expires.UTC().Format("Mon 2 Jan 15:04 MST") + ". Nothing was recorded."}, PageLink: page})
		return openedBatch{}, false
	}
	if used, err := a.core.Marked(ctx, usedKey(tok.Nonce)); err == nil && used {
		a.writePage(w, http.StatusGone, pageView{Heading: "This link was already used",
			Lines: append([]string{"A link decides once; nothing more was recorded. The calls now:"}, callLines(o.calls)...), PageLink: page})
		return openedBatch{}, false
	}
	return o, true
}

// callLines are the calls, one line each: number, action, state.
func callLines(calls []*domain.Question) []string {
	var out []string
	for i, q := range calls {
		what := q.Questions[0].Question
		if q.Action != nil {
			if args, _ := actiontext.Arguments(q.Action); args != "" {
				what = q.Action.Tool + ": " + args
			}
		}
		state := "waiting"
		if q.Status != domain.StatusPending {
			state = outcome(q)
		}
		out = append(out, fmt.Sprintf("%d. %s — %s", i+1, domain.Shorten(strings.Join(strings.Fields(what), " "), 200), state))
	}
	return out
}

// handleBatchOpen shows the confirmation page of Allow all / Deny all.
func (a *Adapter) handleBatchOpen(w http.ResponseWriter, r *http.Request) {
	o, ok := a.openBatch(w, r)
	if !ok {
		return
	}
	cookie, ok := a.setConfirmCookie(w)
	if !ok {
		return
	}
	f := &formView{Action: r.URL.Path, CSRF: a.keys.pageMAC(o.tok.Nonce, cookie), Recipient: o.tok.Recipient}
	heading := fmt.Sprintf("Allow all %d waiting calls?", o.pending)
	f.Choice, f.Tone, f.Button = fmt.Sprintf("allow every call still waiting (%d)", o.pending), "allow", fmt.Sprintf("Allow all %d", o.pending)
	if o.tok.Choice == DenyAllChoice {
		heading = fmt.Sprintf("Deny all %d waiting calls?", o.pending)
		f.Choice, f.Tone, f.Button, f.Note = fmt.Sprintf("deny every call still waiting (%d)", o.pending), "deny", fmt.Sprintf("Deny all %d", o.pending), true
	}
	v := pageView{Heading: heading, Form: f, PageLink: batchPage(a.cfg.PublicURL, o.b.ID),
		Lines: append(callLines(o.calls), "Each call is decided as its own answer; a call decided meanwhile keeps its decision, and one you may not decide stays waiting.")}
	if a.loginRequired(o.calls[0]) {
		if op, ok := a.signedIn(r, o.calls[0]); ok {
			v.Lines = append(v.Lines, "This answer needs a signed-in inbox session: you are signed in as "+op+".")
		} else {
			v.Lines = append(v.Lines, "Sign-in required: this answer is taken only from a browser signed in to the askbridge inbox, so that a forwarded mail cannot decide it. Sign in, then press the button.")
			v.SignIn = a.signInLink(r)
		}
	}
	a.writePage(w, http.StatusOK, v)
}

// handleBatchSubmit decides the batch on the confirmation page's POST.
func (a *Adapter) handleBatchSubmit(w http.ResponseWriter, r *http.Request) {
	o, ok := a.openBatch(w, r)
	if !ok {
		return
	}
	page := batchPage(a.cfg.PublicURL, o.b.ID)
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		a.writePage(w, http.StatusBadRequest, pageView{Heading: "The answer was not recorded", Lines: []string{"The form could not be read. Open the link from the mail again."}})
		return
	}
	c, err := r.Cookie(cookieName)
	if err != nil || !a.keys.checkPageMAC(o.tok.Nonce, c.Value, r.PostForm.Get("csrf")) {
		a.writePage(w, http.StatusForbidden, pageView{Heading: "Press the button on the page this link opens",
			Lines:    []string{"Answers are taken only from the page the link in your mail opens (in the same browser, with cookies allowed). Nothing was recorded."},
			PageLink: strings.TrimRight(a.cfg.PublicURL, "/") + r.URL.Path})
		return
	}
	if a.loginRequired(o.calls[0]) {
		if _, ok := a.signedIn(r, o.calls[0]); !ok {
			a.writePage(w, http.StatusForbidden, pageView{Heading: "Sign in to answer",
				Lines:  []string{"This batch takes answers from email links only in a browser signed in to the askbridge inbox (so that a forwarded mail cannot decide it). Sign in, then open the link again and press the button. Nothing was recorded."},
				SignIn: a.signInLink(r)})
			return
		}
	}
	req := domain.BatchRespondRequest{Decision: domain.DecideAllow}
	if o.tok.Choice == DenyAllChoice {
		req.Decision = domain.DecideDeny
		if note := r.PostForm.Get("note"); strings.TrimSpace(note) != "" {
			if len([]rune(note)) > maxNote {
				a.writePage(w, http.StatusBadRequest, pageView{Heading: domain.TitleInvalid, Lines: []string{fmt.Sprintf("the note is longer than %d characters", maxNote), domain.ChangedNothing}})
				return
			}
			req.Reason = &note // the reason of every call, as typed; never an answer
		}
	}
	for _, q := range o.calls {
		req.Questions = append(req.Questions, q.ID)
	}
	who := domain.Person{Platform: Platform, ID: o.tok.Recipient, Name: o.tok.Recipient}
	if _, d, ok := strings.Cut(o.tok.Recipient, "@"); ok {
		who.Groups = []string{strings.ToLower(d)}
	}
	out, err := a.core.DecideBatch(r.Context(), o.project, o.b.ID, req, who, true)
	if err != nil {
		n := domain.Words{}.Refusal(err, nil, who)
		status := http.StatusConflict
		switch domain.ErrorCode(err) {
		case domain.ENotAllowed:
			status = http.StatusForbidden
		case domain.EInvalidAnswer, domain.EInvalid:
			status = http.StatusBadRequest
		case domain.EAlreadyAnswered:
			status = http.StatusGone
		}
		a.writePage(w, status, pageView{Heading: n.Title, Lines: []string{n.Text}, PageLink: page})
		return
	}
	ttl := time.Until(o.tok.Expires) + 24*time.Hour
	if _, err := a.core.Once(r.Context(), usedKey(o.tok.Nonce), max(ttl, time.Hour)); err != nil {
		a.log.Warn("could not mark an email link used", "batch", o.b.ID, "err", err)
	}
	lines := []string{fmt.Sprintf("Recorded for %d call(s).", len(out.Decided)+len(out.Voted))}
	for _, rf := range out.Refused {
		n := slices.IndexFunc(o.calls, func(q *domain.Question) bool { return q.ID == rf.ID }) + 1
		lines = append(lines, fmt.Sprintf("Call %d is left waiting: %s", n, rf.Message))
	}
	if fresh, err := a.core.Batch(r.Context(), o.project, o.b.ID); err == nil {
		var calls []*domain.Question
		for _, q := range fresh.Questions {
			if slices.Contains(req.Questions, q.ID) {
				calls = append(calls, q)
			}
		}
		lines = append(lines, callLines(calls)...)
	}
	a.writePage(w, http.StatusOK, pageView{Heading: "Thank you", Lines: append(lines, "You can close this page."), PageLink: page})
}
