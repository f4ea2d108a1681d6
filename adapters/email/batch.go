package email

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// A batch of approvals (lifecycle.BatchChannel) is one mail per recipient:
// a section per call with its exact action and its own Allow / Deny links
// (the confirmation pages of a single approval's links), and Allow all N /
// Deny all N links whose pages confirm the whole batch (batchpages.go).
// A mail cannot change once sent, so:
//   - the batch's mail lists every call the batch has when it is sent; a
//     call that joins the batch later brings a new mail listing every call
//     again (each mail is keyed by the batch and its size, so one decision
//     or a retried update mails nothing more);
//   - once every call is decided or withdrawn, one last mail in the thread
//     gives each call's outcome.

// Kinds of a batch's mails.
const (
	kindBatch      mailKind = "batch"      // the batch's calls; Step is how many
	kindBatchFinal mailKind = "batchfinal" // every call's outcome
)

var _ lifecycle.BatchChannel = (*Adapter)(nil)

// PostBatch implements lifecycle.BatchChannel: it queues the batch's mail
// to every recipient of t.
func (a *Adapter) PostBatch(ctx context.Context, b *domain.Batch, t domain.Target) (domain.Target, error) {
	to, err := checkedRecipients(t)
	if err != nil {
		return t, err
	}
	if err := a.queueBatch(ctx, kindBatch, b, to); err != nil {
		return t, err
	}
	t.MessageTS = a.rootID(b.ID, to[0])
	return t, nil
}

// UpdateBatch implements lifecycle.BatchChannel: a call that joined brings
// a new mail of the batch; once every call is decided, the outcome mail.
func (a *Adapter) UpdateBatch(ctx context.Context, b *domain.Batch, t domain.Target) error {
	kind := kindBatch
	if b.Pending == 0 {
		kind = kindBatchFinal
	}
	return a.queueBatch(ctx, kind, b, recipientsOf(t))
}

// checkedRecipients are t's addresses, each a valid one.
func checkedRecipients(t domain.Target) ([]string, error) {
	to := recipientsOf(t)
	if len(to) == 0 {
		return nil, lifecycle.Permanent(errors.New("an email target needs to: [addresses]"))
	}
	for _, addr := range to {
		if _, err := netmail.ParseAddress(addr); err != nil {
			return nil, lifecycle.Permanent(fmt.Errorf("%q is not an email address", addr))
		}
	}
	return to, nil
}

func (a *Adapter) queueBatch(ctx context.Context, kind mailKind, b *domain.Batch, to []string) error {
	now := a.core.Clock().Now()
	for _, addr := range to {
		j := job{Kind: kind, To: addr, Project: b.ProjectID, Question: b.ID, Queued: now}
		if kind == kindBatch {
			j.Step = len(b.Questions)
		}
		if err := a.queue(ctx, j, b.Questions[0]); err != nil {
			return err
		}
	}
	return nil
}

// batchRoot is the Message-ID of a batch's mail of n calls to addr.
func (a *Adapter) batchRoot(batchID, addr string, n int) string {
	return strings.Replace(a.rootID(batchID, addr), "@", ".b"+strconv.Itoa(n)+"@", 1)
}

// batchCalls reads the batch of j and the calls of it mailed to j.To.
func (a *Adapter) batchCalls(ctx context.Context, j job) (*domain.Batch, []*domain.Question, error) {
	b, err := a.core.Batch(ctx, j.Project, j.Question)
	if err != nil {
		return nil, nil, err
	}
	var calls []*domain.Question
	for _, q := range b.Questions {
		if a.sentTo(q, j.To) {
			calls = append(calls, q)
		}
	}
	return b, calls, nil
}

// deliverBatch makes the SMTP attempt of a batch's mail.
func (a *Adapter) deliverBatch(ctx context.Context, j job) error {
	b, calls, err := a.batchCalls(ctx, j)
	if domain.ErrorCode(err) == domain.ENotFound {
		return errDrop
	}
	if err != nil {
		return err
	}
	pending := 0
	for _, q := range calls {
		if q.Status == domain.StatusPending {
			pending++
		}
	}
	switch {
	case len(calls) == 0:
		return errDrop
	case j.Kind == kindBatch && pending == 0:
		return errDrop // decided before its mail left: the outcome mail says how
	case j.Kind == kindBatchFinal && pending > 0:
		return errDrop // queued by mistake: the batch goes on
	}
	first := a.batchRoot(b.ID, j.To, j.Step)
	ttl := time.Until(calls[0].ExpiresAt) + 30*24*time.Hour
	if j.Kind == kindBatchFinal {
		sent, err := a.core.Marked(ctx, sentKey(a.rootID(b.ID, j.To)))
		if err != nil {
			return err
		}
		if !sent {
			return errDrop // no batch mail left: nothing to conclude
		}
	}
	m, err := a.batchMessage(b, calls, j)
	if err != nil {
		return err
	}
	attempt, cancel := context.WithTimeout(ctx, a.cfg.SendTimeout)
	defer cancel()
	if err := classify(a.smtp.send(attempt, m, a.cfg.TLS, a.cfg.SendTimeout)); err != nil {
		return err
	}
	if j.Kind == kindBatch {
		a.mark(ctx, sentKey(a.rootID(b.ID, j.To)), ttl)
		a.mark(ctx, sentKey(first), ttl)
		// Each call's reminders follow in the thread as a single call's
		// do: its mail, for them, is this one.
		for _, q := range calls {
			a.mark(ctx, sentKey(a.rootID(q.ID, j.To)), ttl)
		}
	}
	return nil
}

// batchMessage builds the batch mail of j.
func (a *Adapter) batchMessage(b *domain.Batch, calls []*domain.Question, j job) (*mail.Msg, error) {
	now := a.core.Clock().Now()
	var link func(q *domain.Question, choice int) (string, error)
	if j.Kind == kindBatch {
		link = func(q *domain.Question, choice int) (string, error) {
			t := token{Question: q.ID, Choice: choice, Recipient: j.To, Expires: q.ExpiresAt}
			if choice == AllowAllChoice || choice == DenyAllChoice {
				t.Question, t.Expires = batchRef(b.ID, len(calls)), latestDeadline(calls)
			}
			tok, err := a.keys.sign(t)
			if err != nil {
				return "", err
			}
			return strings.TrimRight(a.cfg.PublicURL, "/") + linkPath + tok, nil
		}
	}
	v, err := buildBatchView(b, calls, j, a.cfg.PublicURL, now, link, a.cfg.ImageHosts)
	if err != nil {
		return nil, err
	}
	text, html, err := renderBatch(v)
	if err != nil {
		return nil, err
	}
	m := mail.NewMsg(mail.WithNoDefaultUserAgent())
	m.SetAddrHeaderFromMailAddress(mail.HeaderFrom, a.from)
	if err := m.To(j.To); err != nil {
		return nil, &refusal{code: 553, msg: fmt.Sprintf("%q is not an address", j.To)}
	}
	subject := headerText(v.Title)
	root := "<" + a.rootID(b.ID, j.To) + ">"
	if j.Kind == kindBatchFinal {
		subject = "Re: " + subject
		m.SetMessageIDWithValue(strings.Replace(a.rootID(b.ID, j.To), "@", ".bfinal@", 1))
		m.SetGenHeader(mail.HeaderInReplyTo, root)
		m.SetGenHeader(mail.HeaderReferences, root)
	} else {
		m.SetMessageIDWithValue(a.batchRoot(b.ID, j.To, j.Step))
	}
	m.Subject(subject)
	m.SetDateWithValue(now)
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetGenHeader("X-Auto-Response-Suppress", "All")
	m.SetBodyString(mail.TypeTextPlain, text)
	m.AddAlternativeString(mail.TypeTextHTML, html)
	return m, nil
}

// batchRef is what an Allow all / Deny all link names: the batch and how
// many of its calls the mail showed ("<batch id>#<n>").
func batchRef(id string, n int) string { return id + "#" + strconv.Itoa(n) }

// parseBatchRef reads a batchRef.
func parseBatchRef(s string) (id string, n int, ok bool) {
	id, num, found := strings.Cut(s, "#")
	n, err := strconv.Atoi(num)
	return id, n, found && id != "" && err == nil && n > 0
}

func latestDeadline(qs []*domain.Question) time.Time {
	var t time.Time
	for _, q := range qs {
		if q.ExpiresAt.After(t) {
			t = q.ExpiresAt
		}
	}
	return t
}
