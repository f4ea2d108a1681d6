package email

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// LinkPath is where the answer links of mails point: GET and HEAD show a
// confirmation page and decide nothing; only the POST of that page,
// carrying the page's own token that matches the cookie set with it,
// records the answer.
const LinkPath = "/email/c/"

const (
	linkPath   = LinkPath
	cookieName = "askbridge_email_page"
	maxForm    = 64 << 10
	maxNote    = domain.MaxAnswerLen
)

const pageCSS = `body{margin:0;background:#f6f7f9;font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d1f23}
main{max-width:640px;margin:24px auto;padding:20px 24px;background:#fff;border:1px solid #dde1e6;border-radius:6px}
h1{font-size:20px;margin:0 0 12px}.question{font-weight:bold;font-size:16px;white-space:pre-wrap}.header{font-size:12px;text-transform:uppercase;color:#555b63;margin:0}
.context{padding:10px 12px;background:#f6f7f9;border-left:3px solid #c4cad1;white-space:pre-wrap}
pre{background:#f6f7f9;padding:10px 12px;border-radius:4px;white-space:pre-wrap;word-break:break-all}pre.cmd{background:#1d1f23;color:#f6f7f9}
.add{background:#e6ffec;display:block}.del{background:#ffebe9;display:block;text-decoration:line-through}
.muted{color:#555b63;font-size:13px}fieldset{border:1px solid #dde1e6;border-radius:4px;margin:0 0 12px}
textarea{width:100%;box-sizing:border-box}button{font-size:16px;padding:10px 20px;border:0;border-radius:4px;color:#fff;background:#1f4fd1;cursor:pointer}
button.allow{background:#1a7f37}button.deny{background:#b42318}`

var (
	pageTmpl = htmltemplate.Must(htmltemplate.New("").ParseFS(templateFS, "templates/page.html"))
	// The page's only style, allowed by its hash: no inline style or script
	// of anyone else's runs.
	pageCSP = func() string {
		h := sha256.Sum256([]byte(pageCSS))
		return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'; " +
			"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	}()
)

// pageView is one page: a confirmation, a form, a result or a refusal.
type pageView struct {
	Heading  string
	Lines    []string
	Q        *mailView
	Form     *formView
	PageLink string
	// SignIn links to the inbox's sign-in, back to this page after it.
	SignIn string
	CSS    htmltemplate.CSS
}

type formView struct {
	Action    string
	CSRF      string
	Choice    string // the option being confirmed; empty: the whole form
	Tone      string
	Note      bool
	Items     []formItem
	Button    string
	Recipient string
}

type formItem struct {
	Question string
	Multi    bool
	Other    bool // free text offered (open-ended, or "Other")
	Options  []optionView
}

// Register adds the link endpoints to mux. Methods other than GET, HEAD
// and POST get 405 from the mux.
func (a *Adapter) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+linkPath+"{token}", a.handleOpen)
	mux.HandleFunc("POST "+linkPath+"{token}", a.handleSubmit)
}

// pageHeaders: never cached, never indexed, no referrer leaves with the
// token, no script at all.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
}

func (a *Adapter) writePage(w http.ResponseWriter, status int, v pageView) {
	pageHeaders(w)
	v.CSS = htmltemplate.CSS(pageCSS)
	w.WriteHeader(status)
	if err := pageTmpl.ExecuteTemplate(w, "page.html", v); err != nil {
		a.log.Warn("rendering an email page failed", "err", err)
	}
}

// opened is a verified link with its question, or the page that refuses it.
type opened struct {
	tok token
	q   *domain.Question
}

// open verifies the link and reads its question. When it returns false it
// has written the refusal page.
func (a *Adapter) open(w http.ResponseWriter, r *http.Request) (opened, bool) {
	tok, err := a.keys.verify(r.PathValue("token"))
	if err != nil {
		a.writePage(w, http.StatusForbidden, pageView{Heading: "This link is not valid",
			Lines: []string{"The link was changed or cut short, so it cannot answer anything. Open it again from the mail, or copy the whole link. Nothing was recorded."}})
		return opened{}, false
	}
	ctx := r.Context()
	project, err := a.core.Locate(ctx, tok.Question)
	var q *domain.Question
	if err == nil {
		q, err = a.core.Question(ctx, project, tok.Question)
	}
	if err != nil {
		if domain.ErrorCode(err) == domain.ENotFound {
			a.writePage(w, http.StatusGone, pageView{Heading: "This question no longer exists",
				Lines: []string{"It ended long enough ago to be deleted. Nothing was recorded."}})
			return opened{}, false
		}
		a.log.Warn("reading the question of an email link failed", "err", err)
		a.writePage(w, http.StatusServiceUnavailable, pageView{Heading: "Try again in a moment",
			Lines: []string{"The bridge could not read the question just now. Nothing was recorded."}})
		return opened{}, false
	}
	page := questionPage(a.cfg.PublicURL, q.ID)
	if !a.sentTo(q, tok.Recipient) {
		a.writePage(w, http.StatusForbidden, pageView{Heading: "This link is for another address",
			Lines: []string{"The question was not sent to the address this link was made for. Nothing was recorded."}})
		return opened{}, false
	}
	if q.Status.Final() {
		a.writePage(w, http.StatusGone, a.endedPage(q, tok))
		return opened{}, false
	}
	if !a.core.Clock().Now().Before(tok.Expires) {
		a.writePage(w, http.StatusGone, pageView{Heading: "This link expired",
			Lines: []string{"It was valid until " + tok.Expires.UTC().Format("Mon 2 Jan 15:04 MST") + ". Nothing was recorded."}, PageLink: page})
		return opened{}, false
	}
	used, err := a.core.Marked(ctx, usedKey(tok.Nonce))
	if err == nil && used {
		a.writePage(w, http.StatusGone, pageView{Heading: "This link was already used",
			Lines: []string{"Your answer from this link was recorded" + tallySuffix(q) + ". A link answers once; nothing more was recorded."}, PageLink: page})
		return opened{}, false
	}
	return opened{tok: tok, q: q}, true
}

// sentTo reports whether addr is a recipient of one of q's email copies.
func (a *Adapter) sentTo(q *domain.Question, addr string) bool {
	for _, t := range q.Targets {
		if t.Platform != Platform {
			continue
		}
		for _, to := range recipientsOf(t) {
			if strings.EqualFold(to, addr) {
				return true
			}
		}
	}
	return false
}

func tallySuffix(q *domain.Question) string {
	if t := domain.TallyLine(q); t != "" {
		return " (" + t + ")"
	}
	return ""
}

// endedPage shows the outcome of a question that is no longer pending:
// "You answered this at 03:12 — Allowed".
func (a *Adapter) endedPage(q *domain.Question, tok token) pageView {
	line := outcome(q) + "."
	heading := "This question is closed"
	if q.RespondedBy != nil && q.RespondedBy.Platform == Platform && strings.EqualFold(q.RespondedBy.ID, tok.Recipient) && q.RespondedAt != nil {
		heading = "This link was already used"
		line = "You answered at " + q.RespondedAt.UTC().Format("15:04 MST on Mon 2 Jan") + " — " + outcome(q) + "."
	}
	return pageView{Heading: heading, Lines: []string{line, "Nothing more to do; nothing was recorded now."}, PageLink: questionPage(a.cfg.PublicURL, q.ID)}
}

// usedKey marks a link used, on every replica.
func usedKey(nonce string) string { return "email:used:" + nonce }

// handleOpen shows the confirmation page (GET, and HEAD without a body).
// It decides nothing.
func (a *Adapter) handleOpen(w http.ResponseWriter, r *http.Request) {
	if a.batchLink(r) {
		a.handleBatchOpen(w, r)
		return
	}
	o, ok := a.open(w, r)
	if !ok {
		return
	}
	cookie, ok := a.setConfirmCookie(w)
	if !ok {
		return
	}
	v, err := a.confirmView(o, a.keys.pageMAC(o.tok.Nonce, cookie), r.URL.Path)
	if err != nil {
		a.writePage(w, http.StatusForbidden, pageView{Heading: "This link is not valid", Lines: []string{err.Error()}})
		return
	}
	if a.loginRequired(o.q) {
		// The session cookie is SameSite=Strict: a click from a webmail
		// does not carry it, the sign-in link (back to this page) does.
		if op, ok := a.signedIn(r, o.q); ok {
			v.Lines = append(v.Lines, "This answer needs a signed-in inbox session: you are signed in as "+op+".")
		} else {
			v.Lines = append(v.Lines, "Sign-in required: this answer is taken only from a browser signed in to the askbridge inbox, so that a forwarded mail cannot decide it. Sign in, then press the button.")
			v.SignIn = a.signInLink(r)
		}
	}
	a.writePage(w, http.StatusOK, v)
}

func (a *Adapter) confirmView(o opened, csrf, action string) (pageView, error) {
	q := o.q
	mv, err := buildView(q, kindPost, o.tok.Recipient, "", nil, a.core.Clock().Now(), nil, nil)
	if err != nil {
		return pageView{}, err
	}
	f := &formView{Action: action, CSRF: csrf, Recipient: o.tok.Recipient, Button: "Send my answer"}
	v := pageView{Heading: mv.Title, Q: mv, Form: f, PageLink: questionPage(a.cfg.PublicURL, q.ID)}
	if mv.Deadline != "" {
		v.Lines = append(v.Lines, mv.Deadline)
	}
	if o.tok.Choice == FormChoice {
		for _, it := range q.Questions {
			fi := formItem{Question: domain.Shorten(it.Question, maxQuestionRunes), Multi: it.MultiSelect, Other: !approval.Is(q)}
			for _, op := range it.Options {
				// A page can pre-select: the defaults are checked, except
				// on an item asked only on a condition (show_if), which
				// this page (no script) cannot hide when another choice
				// leaves it out: its checked defaults would be refused.
				fi.Options = append(fi.Options, optionView{Label: op.Label, Description: domain.Shorten(op.Description, maxDescRunes),
					Default: op.Default && it.ShowIf == nil})
			}
			f.Items = append(f.Items, fi)
		}
		mv.Items = nil
		return v, nil
	}
	if o.tok.Choice == DefaultsChoice {
		sum := domain.DefaultsSummary(q.Questions)
		if sum == "" || approval.Is(q) {
			return pageView{}, errors.New("this question has no default for every item asked, so it cannot be answered with its defaults; use the Answer link in the mail. Nothing was recorded")
		}
		f.Choice = "the defaults — " + sum
		f.Button = "Send the defaults"
		return v, nil
	}
	if len(q.Questions) != 1 || o.tok.Choice < 0 || o.tok.Choice >= len(q.Questions[0].Options) {
		return pageView{}, errors.New("the link names an option the question does not have; nothing was recorded")
	}
	opt := q.Questions[0].Options[o.tok.Choice]
	f.Choice = opt.Label
	f.Button = "Answer “" + domain.Shorten(opt.Label, 60) + "”"
	if tones := approval.Tones(q); tones != nil {
		switch tones[o.tok.Choice] {
		case approval.Allow:
			f.Tone, f.Button = "allow", domain.Shorten(opt.Label, 60)+": allow this"
			if q.Action != nil {
				f.Button = "Allow this " + domain.Shorten(q.Action.Tool, 40)
			}
		case approval.Deny:
			f.Tone, f.Button = "deny", domain.Shorten(opt.Label, 60)+": deny this"
			f.Note = approval.NoteAllowed(q)
		}
	}
	return v, nil
}

// handleSubmit records the answer of a confirmation page's POST.
func (a *Adapter) handleSubmit(w http.ResponseWriter, r *http.Request) {
	if a.batchLink(r) {
		a.handleBatchSubmit(w, r)
		return
	}
	o, ok := a.open(w, r)
	if !ok {
		return
	}
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
	var operator string
	if a.loginRequired(o.q) {
		op, ok := a.signedIn(r, o.q)
		if !ok {
			a.log.Info("email answer refused: the route requires a signed-in inbox session", "question", o.q.ID, "recipient", o.tok.Recipient)
			a.writePage(w, http.StatusForbidden, pageView{Heading: "Sign in to answer",
				Lines:  []string{"This question takes answers from email links only in a browser signed in to the askbridge inbox (so that a forwarded mail cannot decide it). Sign in, then open the link again and press the button. Nothing was recorded."},
				SignIn: a.signInLink(r)})
			return
		}
		operator = op
	}
	req, err := formAnswer(o, r)
	if err != nil {
		a.writePage(w, http.StatusBadRequest, pageView{Heading: domain.TitleInvalid, Lines: []string{err.Error(), domain.ChangedNothing}})
		return
	}
	who := domain.Person{Platform: Platform, ID: o.tok.Recipient, Name: o.tok.Recipient}
	if _, d, ok := strings.Cut(o.tok.Recipient, "@"); ok {
		who.Groups = []string{strings.ToLower(d)}
	}
	final, err := a.core.AnswerRead(r.Context(), o.q, req, who)
	if err != nil {
		n := domain.Words{}.Refusal(err, final, who)
		status := http.StatusConflict
		switch domain.ErrorCode(err) {
		case domain.ENotAllowed:
			status = http.StatusForbidden
		case domain.EInvalidAnswer:
			status = http.StatusBadRequest
		case domain.EAlreadyAnswered, domain.EQuestionCancelled, domain.EQuestionExpired:
			status = http.StatusGone
		}
		a.writePage(w, status, pageView{Heading: n.Title, Lines: []string{n.Text}, PageLink: questionPage(a.cfg.PublicURL, o.q.ID)})
		return
	}
	if operator != "" {
		a.core.Audit(r.Context(), final, domain.AuditEntry{Type: "email_signed_in", By: &who,
			Detail: "answered from an email link while signed in to the inbox as " + operator})
	}
	ttl := time.Until(o.tok.Expires) + 24*time.Hour
	if _, err := a.core.Once(r.Context(), usedKey(o.tok.Nonce), max(ttl, time.Hour)); err != nil {
		a.log.Warn("could not mark an email link used", "question", o.q.ID, "err", err)
	}
	line := "Recorded: " + outcome(final) + "."
	if final.Status == domain.StatusPending {
		line = "Your vote was recorded" + tallySuffix(final) + "."
	}
	a.writePage(w, http.StatusOK, pageView{Heading: "Thank you", Lines: []string{line, "You can close this page."}, PageLink: questionPage(a.cfg.PublicURL, o.q.ID)})
}

// loginRequired reports whether q's route takes email answers only from a
// signed-in inbox session (email: {require_login: true}).
func (a *Adapter) loginRequired(q *domain.Question) bool {
	if q.Route == "" {
		return false
	}
	rt, ok := a.core.Route(q.Route)
	return ok && rt.EmailRequireLogin
}

// signedIn asks the inbox who is signed in in r's browser; nobody when it
// is not wired (fail closed).
func (a *Adapter) signedIn(r *http.Request, q *domain.Question) (string, bool) {
	if a.cfg.SignedIn == nil {
		return "", false
	}
	return a.cfg.SignedIn(r, q.ProjectID)
}

// signInLink is the inbox's sign-in page, returning to this link's page.
func (a *Adapter) signInLink(r *http.Request) string {
	return strings.TrimRight(a.cfg.PublicURL, "/") + "/login?next=" + url.QueryEscape(r.URL.Path)
}

// formAnswer reads the answer the page's form sent.
func formAnswer(o opened, r *http.Request) (domain.RespondRequest, error) {
	q := o.q
	if o.tok.Choice == DefaultsChoice {
		// The defaults as the question holds them now: the page showed
		// the same, and ParseAnswer checks them like any answer.
		req, ok := domain.DefaultsRequest(q.Questions)
		if !ok || approval.Is(q) {
			return domain.RespondRequest{}, errors.New("this question has no default for every item asked; use the Answer link in the mail")
		}
		return req, nil
	}
	if o.tok.Choice != FormChoice {
		label := q.Questions[0].Options[o.tok.Choice].Label
		if o.tok.Choice == approval.DenyOption(q) {
			// The note is the reason, as typed; never read as an answer.
			if req, ok := approval.NoteRequest(q, r.PostForm.Get("note")); ok {
				if len([]rune(*req.Reason)) > maxNote {
					return domain.RespondRequest{}, fmt.Errorf("the note is longer than %d characters", maxNote)
				}
				return req, nil
			}
		}
		return domain.RespondRequest{Response: &label}, nil
	}
	answers := map[string]domain.StringList{}
	for i, it := range q.Questions {
		var picked domain.StringList
		for _, s := range r.PostForm["i"+strconv.Itoa(i)] {
			j, err := strconv.Atoi(s)
			if err != nil || j < 0 || j >= len(it.Options) {
				return domain.RespondRequest{}, errors.New("the form names an option the question does not have")
			}
			picked = append(picked, it.Options[j].Label)
		}
		if t := strings.TrimSpace(r.PostForm.Get("t" + strconv.Itoa(i))); t != "" && !approval.Is(q) {
			picked = append(picked, t)
		}
		if len(picked) > 0 {
			answers[it.Question] = picked
		}
	}
	return domain.RespondRequest{Answers: answers}, nil
}

// setConfirmCookie sets the cookie a confirmation page's POST must carry
// (one per page shown); false when none could be made (the page says so).
func (a *Adapter) setConfirmCookie(w http.ResponseWriter) (string, bool) {
	cookie, err := randomString(18)
	if err != nil {
		a.writePage(w, http.StatusInternalServerError, pageView{Heading: "Try again in a moment"})
		return "", false
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookie, Path: linkPath, HttpOnly: true, Secure: a.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(time.Hour / time.Second)})
	return cookie, true
}
