// Package email is the email surface: it mails a question to each
// recipient of an email target ({platform: email, to: [addresses]}) over
// SMTP, threads reminders and the outcome as replies, and takes answers
// from the links in the mail — never from a GET or HEAD (mail scanners
// fetch every link), only from the POST of the confirmation page a link
// opens (pages.go).
//
// Every mail leaves through the bridge's durable delivery queue: Post,
// Remind and Finish queue an "email.send" delivery per recipient, and the
// adapter, as the queue's Sender for "email", makes the SMTP attempt. A
// replica that dies mid-send leaves the delivery to another; a 4xx or a
// network failure is retried with backoff; a 5xx refusal is permanent
// (logged, counted and audited by the deliverer).
package email

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	netmail "net/mail"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
)

// Platform is the name of email targets and people ("email:ana@example.com").
const Platform = "email"

// GroupKind is the responders field that admits every address of a mail
// domain: email_domains: [example.com].
const GroupKind = "email_domains"

func init() {
	domain.RegisterPlatform(domain.PlatformInfo{Name: Platform, GroupKind: GroupKind, GroupNoun: "mail domain",
		Place: func(channel string) string { return "email " + strings.ReplaceAll(channel, ",", ", ") }})
}

// Config is the email section of the configuration.
type Config struct {
	// SMTPURL is email.smtp_url (smtp.go: schemes, ports, auth).
	SMTPURL string
	// SMTPPassword is email.smtp_password (_file, EMAIL_SMTP_PASSWORD).
	SMTPPassword string
	// From is email.from: "askbridge <askbridge@example.com>".
	From string
	// LinkSecret is email.link_secret: signs the answer links (at least
	// 32 characters; rotate it to void every link sent).
	LinkSecret string
	// PublicURL is the bridge's address as recipients reach it; every link
	// points there (public_url).
	PublicURL string
	// TLS, if set, is the TLS configuration for the SMTP server (tests
	// trust their own CA with it).
	TLS *tls.Config
	// SendTimeout bounds one SMTP attempt (default 60s; the deliverer's
	// attempt timeout bounds it too).
	SendTimeout time.Duration
	// Outbox is the durable delivery queue every mail goes through (the
	// store); Kick, if set, wakes the deliverer when a mail is queued.
	// Without an Outbox a mail is sent at once, inside Post (tests of
	// the mail itself).
	Outbox Outbox
	Kick   func()
	// SignedIn reports the operator signed in to the web inbox in r's
	// browser who may see project (app wires the inbox's session check).
	// A question whose route has email: {require_login: true} is answered
	// from a link only when it says ok; nil refuses every such answer.
	SignedIn func(r *http.Request, project string) (operator string, ok bool)
	// ImageHosts are web.image_hosts: a question's picture from one of
	// these hosts is an <img> in the mail; any other is a link with its
	// alt text (mail programs load no remote picture by default, and one
	// that does tells the host who read the mail).
	ImageHosts []string
}

// Outbox queues a delivery once per id (lifecycle.DeliveryQueue).
type Outbox interface {
	EnqueueDelivery(ctx context.Context, d lifecycle.Delivery) (queued bool, err error)
}

// Event is the event of every mail's delivery; the adapter is the
// deliverer's Sender for it (Name, Send).
const Event = Platform + ".send"

// Core is what the adapter needs of the lifecycle: the Router.
type Core interface {
	lifecycle.Chat
	Marked(ctx context.Context, key string) (bool, error)
	// Audit notes on the question's trail who was signed in when a
	// require_login answer came in.
	Audit(ctx context.Context, q *domain.Question, e domain.AuditEntry)
}

// Adapter is the email surface.
type Adapter struct {
	cfg     Config
	smtp    smtpTarget
	from    *netmail.Address
	msgHost string // the right side of Message-IDs: the From address's domain
	keys    keys
	core    Core
	log     *slog.Logger
	queue   queueFunc
	secure  bool
}

var _ lifecycle.Channel = (*Adapter)(nil)

// New checks cfg and builds the adapter. Errors name the key and the fix.
func New(cfg Config, core Core, log *slog.Logger) (*Adapter, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := parseSMTPURL(cfg.SMTPURL, cfg.SMTPPassword)
	if err != nil {
		return nil, err
	}
	from, err := netmail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("email.from: %q is not an address; write it as askbridge@example.com or \"askbridge <askbridge@example.com>\"", cfg.From)
	}
	if len(cfg.LinkSecret) < 32 {
		return nil, errors.New("email.link_secret: required, at least 32 characters (it signs the answer links; e.g. openssl rand -hex 32)")
	}
	if !strings.HasPrefix(cfg.PublicURL, "https://") && !strings.HasPrefix(cfg.PublicURL, "http://") {
		return nil, errors.New("public_url: required for email (the links in a mail point there), e.g. https://askbridge.example.com")
	}
	if cfg.SendTimeout == 0 {
		cfg.SendTimeout = 60 * time.Second
	}
	_, host, _ := strings.Cut(from.Address, "@")
	a := &Adapter{cfg: cfg, smtp: st, from: from, msgHost: host, keys: deriveKeys([]byte(cfg.LinkSecret)), core: core,
		log: log, secure: strings.HasPrefix(cfg.PublicURL, "https://")}
	a.queue = a.sendNow
	if cfg.Outbox != nil {
		a.queue = a.enqueue
	}
	return a, nil
}

var _ resume.Sender = (*Adapter)(nil)

// Name implements resume.Sender: the adapter sends "email.*" deliveries.
func (a *Adapter) Name() string { return Platform }

// Send implements resume.Sender: one SMTP attempt of a queued mail.
func (a *Adapter) Send(ctx context.Context, d lifecycle.Delivery) error {
	var j job
	if err := json.Unmarshal(d.Payload, &j); err != nil || j.To == "" || j.Question == "" {
		return resume.Permanent(errors.New("the queued mail is unreadable (written by another release?)"))
	}
	err := a.deliver(ctx, j, d.Question)
	var r *refusal
	switch {
	case errors.Is(err, errDrop):
		return resume.ErrDrop
	case errors.As(err, &r):
		return resume.Permanent(err)
	}
	return err
}

// enqueue queues j once (its id names the question, the mail and the
// recipient): a repeated ask, a retried Post or two replicas mail once.
func (a *Adapter) enqueue(ctx context.Context, j job, q *domain.Question) error {
	payload, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = a.cfg.Outbox.EnqueueDelivery(ctx, lifecycle.Delivery{ID: j.deliveryID(), ProjectID: q.ProjectID, QuestionID: q.ID,
		Event: Event, Payload: payload}) // due now, by the queue's clock (the deliverer's)
	if err != nil {
		return fmt.Errorf("queuing the mail to %s: %w", j.To, err)
	}
	if a.cfg.Kick != nil {
		a.cfg.Kick()
	}
	return nil
}

// Platform implements lifecycle.Channel.
func (a *Adapter) Platform() string { return Platform }

// recipientsOf returns the addresses of an email target.
func recipientsOf(t domain.Target) []string {
	if len(t.To) > 0 {
		return t.To
	}
	var out []string
	for _, s := range strings.Split(t.Channel, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// job is one mail to send: the payload of an email.send delivery.
type job struct {
	Kind     mailKind  `json:"kind"`
	To       string    `json:"to"`
	Step     int       `json:"step,omitempty"` // the escalation level of a reminder
	Project  string    `json:"project"`
	Question string    `json:"question"`
	Queued   time.Time `json:"queued"`
}

// deliveryID names a job once: queuing it again changes nothing.
func (j job) deliveryID() string {
	k := string(j.Kind)
	if j.Kind == kindRemind || j.Kind == kindBatch {
		k = fmt.Sprintf("%s%d", j.Kind, j.Step)
	}
	return "email.send:" + j.Question + ":" + k + ":" + strings.ToLower(j.To)
}

// queueFunc queues a job (the outbox) or, without one, sends it at once.
type queueFunc func(ctx context.Context, j job, q *domain.Question) error

// Post implements lifecycle.Channel: it queues the question's mail to
// every recipient of t.
func (a *Adapter) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	to := recipientsOf(t)
	if len(to) == 0 {
		return t, lifecycle.Permanent(errors.New("an email target needs to: [addresses]"))
	}
	for _, addr := range to {
		if _, err := netmail.ParseAddress(addr); err != nil {
			return t, lifecycle.Permanent(fmt.Errorf("%q is not an email address", addr))
		}
	}
	now := a.core.Clock().Now()
	for _, addr := range to {
		if err := a.queue(ctx, job{Kind: kindPost, To: addr, Project: q.ProjectID, Question: q.ID, Queued: now}, q); err != nil {
			return t, err
		}
	}
	t.MessageTS = a.rootID(q.ID, to[0])
	return t, nil
}

// Update implements lifecycle.Channel. A sent mail cannot change: people
// see the question's state on the page a link opens.
func (a *Adapter) Update(context.Context, *domain.Question, domain.Target) error { return nil }

// Remind implements lifecycle.Channel: a reply in each recipient's thread.
func (a *Adapter) Remind(ctx context.Context, q *domain.Question, t domain.Target) error {
	for _, addr := range recipientsOf(t) {
		if err := a.queue(ctx, job{Kind: kindRemind, To: addr, Step: q.EscalationLevel, Project: q.ProjectID, Question: q.ID, Queued: a.core.Clock().Now()}, q); err != nil {
			return err
		}
	}
	return nil
}

// Finish implements lifecycle.Channel: one last short reply with the
// outcome in each recipient's thread.
func (a *Adapter) Finish(ctx context.Context, q *domain.Question, t domain.Target) error {
	for _, addr := range recipientsOf(t) {
		if err := a.queue(ctx, job{Kind: kindFinal, To: addr, Project: q.ProjectID, Question: q.ID, Queued: a.core.Clock().Now()}, q); err != nil {
			return err
		}
	}
	return nil
}

// rootID is the Message-ID of the question's mail to addr (without the
// angle brackets): the same on every replica and every retry, so a
// reminder and the outcome thread under it.
func (a *Adapter) rootID(questionID, addr string) string {
	h := sha256.Sum256([]byte(strings.ToLower(addr)))
	return "askbridge." + questionID + "." + hex.EncodeToString(h[:8]) + "@" + a.msgHost
}

func (j job) messageID(a *Adapter) string {
	root := a.rootID(j.Question, j.To)
	switch j.Kind {
	case kindRemind:
		return strings.Replace(root, "@", fmt.Sprintf(".r%d@", j.Step), 1)
	case kindFinal:
		return strings.Replace(root, "@", ".final@", 1)
	}
	return root
}

// sentKey marks, on any replica, that the question's mail to addr left:
// a reminder or an outcome is sent only under a mail that was. unsentKey
// marks that it never will (the question ended first, or the server
// refused it).
func sentKey(root string) string   { return "email:sent:" + root }
func unsentKey(root string) string { return "email:unsent:" + root }

// replyWait is how long a reminder or an outcome waits for the mail it
// replies to, when neither sentKey nor unsentKey is marked yet.
const replyWait = 15 * time.Minute

// errDrop: nothing to send any more (the question ended before its mail
// left; the mail a reply would thread under never left).
var errDrop = errors.New("nothing to send")

// errNotYet: a reply whose question mail has not left yet; retried.
var errNotYet = errors.New("waiting for the question's mail to leave first")

// sendNow sends j at once (no outbox): tests of the mail itself.
func (a *Adapter) sendNow(ctx context.Context, j job, snapshot *domain.Question) error {
	err := a.deliver(ctx, j, snapshot)
	if errors.Is(err, errDrop) || errors.Is(err, errNotYet) {
		return nil
	}
	return err
}

// deliver makes the SMTP attempt of j. snapshot is the record as it was
// when j was queued (nil if unknown). It returns errDrop when there is
// nothing to send any more and a *refusal when the server refused for good.
func (a *Adapter) deliver(ctx context.Context, j job, snapshot *domain.Question) error {
	if j.Kind == kindBatch || j.Kind == kindBatchFinal {
		return a.deliverBatch(ctx, j)
	}
	q, err := a.core.Question(ctx, j.Project, j.Question)
	if err != nil {
		if domain.ErrorCode(err) != domain.ENotFound || snapshot == nil {
			if domain.ErrorCode(err) == domain.ENotFound {
				return errDrop
			}
			return err
		}
		q = snapshot
	}
	root := a.rootID(j.Question, j.To)
	ttl := time.Until(q.ExpiresAt) + 30*24*time.Hour
	switch j.Kind {
	case kindPost:
		if q.Status.Final() {
			a.mark(ctx, unsentKey(root), ttl)
			return errDrop
		}
	case kindRemind, kindFinal:
		if j.Kind == kindRemind && q.Status.Final() {
			return errDrop
		}
		sent, err := a.core.Marked(ctx, sentKey(root))
		if err != nil {
			return err
		}
		if !sent {
			never, err := a.core.Marked(ctx, unsentKey(root))
			if err != nil {
				return err
			}
			if never || a.core.Clock().Now().Sub(j.Queued) > replyWait {
				return errDrop
			}
			return errNotYet
		}
	}
	m, err := a.message(q, j)
	if err != nil {
		return err
	}
	attempt, cancel := context.WithTimeout(ctx, a.cfg.SendTimeout)
	defer cancel()
	if err := classify(a.smtp.send(attempt, m, a.cfg.TLS, a.cfg.SendTimeout)); err != nil {
		var r *refusal
		if j.Kind == kindPost && errors.As(err, &r) {
			a.mark(ctx, unsentKey(root), ttl)
		}
		return err
	}
	if j.Kind == kindPost {
		a.mark(ctx, sentKey(root), ttl)
	}
	return nil
}

// mark notes key on every replica; a failure only delays or drops replies.
func (a *Adapter) mark(ctx context.Context, key string, ttl time.Duration) {
	if _, err := a.core.Once(ctx, key, ttl); err != nil {
		a.log.Warn("could not note a mail's fate; its reminders and outcome may not follow", "err", err)
	}
}

// message builds the mail of j for q.
func (a *Adapter) message(q *domain.Question, j job) (*mail.Msg, error) {
	now := a.core.Clock().Now()
	var link linkFunc
	if j.Kind != kindFinal {
		link = func(choice int) (string, error) {
			tok, err := a.keys.sign(token{Question: q.ID, Choice: choice, Recipient: j.To, Expires: q.ExpiresAt})
			if err != nil {
				return "", err
			}
			return strings.TrimRight(a.cfg.PublicURL, "/") + linkPath + tok, nil
		}
	}
	v, err := buildView(q, j.Kind, j.To, questionPage(a.cfg.PublicURL, q.ID), othersAsked(q, j.To), now, link, a.cfg.ImageHosts)
	if err != nil {
		return nil, err
	}
	text, html, err := render(v)
	if err != nil {
		return nil, err
	}
	m := mail.NewMsg(mail.WithNoDefaultUserAgent())
	m.SetAddrHeaderFromMailAddress(mail.HeaderFrom, a.from)
	if err := m.To(j.To); err != nil {
		return nil, &refusal{code: 553, msg: fmt.Sprintf("%q is not an address", j.To)}
	}
	subject := headerText(v.Title)
	if j.Kind != kindPost {
		subject = "Re: " + subject
	}
	m.Subject(subject)
	m.SetMessageIDWithValue(j.messageID(a))
	if j.Kind != kindPost {
		root := "<" + a.rootID(j.Question, j.To) + ">"
		m.SetGenHeader(mail.HeaderInReplyTo, root)
		m.SetGenHeader(mail.HeaderReferences, root)
	}
	m.SetDateWithValue(now)
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetGenHeader("X-Auto-Response-Suppress", "All")
	m.SetBodyString(mail.TypeTextPlain, text)
	m.AddAlternativeString(mail.TypeTextHTML, html)
	return m, nil
}

// headerText makes agent text safe for a header: no line breaks or other
// control characters (a header injection needs one), runs of space as one.
func headerText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
