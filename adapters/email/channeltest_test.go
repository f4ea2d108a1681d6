package email

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store/storetest"
)

// The outbound conformance cases that apply to a surface whose posts go
// through the outbox: every shape posted, every outcome shown. "The copy"
// is the recipient's thread: the question mail, then replies.
func TestChannelConformance(t *testing.T) {
	channeltest.RunQueued(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.Env {
		st := storetest.Open(t, "")
		fake := fakesmtp.Start(t, fakesmtp.Options{Mode: fakesmtp.StartTLS, User: smtpUser, Password: smtpPass})
		rc.Store = st
		router := lifecycle.NewRouter(rc)
		t.Cleanup(func() { _ = router.Close(context.Background()) })
		log, logs := channeltest.NewLog()
		d := resume.New(resume.Config{Store: st, Logger: log, Poll: 20 * time.Millisecond, MinBackoff: 50 * time.Millisecond,
			MaxBackoff: 200 * time.Millisecond})
		ad, err := New(Config{SMTPURL: "smtp://" + smtpUser + "@" + fake.Addr, SMTPPassword: smtpPass, From: "askbridge@bridge.example",
			LinkSecret: linkKey, PublicURL: "https://askbridge.example", TLS: tlsFor(fake), Outbox: st, Kick: d.Kick}, router, log)
		if err != nil {
			t.Fatal(err)
		}
		d.AddSender(ad)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		t.Cleanup(func() { stop(); <-done })
		// The suite ends questions right after asking; a question that
		// ends before its mail left is never mailed (nor its outcome), so
		// Post here returns once the mail was delivered, as it would have
		// been long before anyone answers.
		delivered := func() bool {
			for _, m := range fake.Messages() {
				if len(m.To) == 1 && m.To[0] == ana {
					return true
				}
			}
			return false
		}
		router.AddChannel(waitingChannel{Adapter: ad, delivered: delivered})

		// thread waits until the thread to ana holds want mails (or the
		// last one is an outcome) and returns it.
		thread := func(final bool) []fakesmtp.Message {
			deadline := time.Now().Add(10 * time.Second)
			for {
				var ms []fakesmtp.Message
				for _, m := range fake.Messages() {
					if len(m.To) == 1 && m.To[0] == ana {
						ms = append(ms, m)
					}
				}
				done := len(ms) > 0 && (!final || strings.HasPrefix(ms[len(ms)-1].Header().Get("Subject"), "Re: "))
				if done || time.Now().After(deadline) {
					return ms
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		isFinal := func(tg domain.Target) bool {
			project, err := router.Locate(context.Background(), strings.Split(strings.TrimPrefix(tg.MessageTS, "askbridge."), ".")[0])
			if err != nil {
				return false
			}
			id := strings.Split(strings.TrimPrefix(tg.MessageTS, "askbridge."), ".")[0]
			q, err := router.Question(context.Background(), project, id)
			return err == nil && q.Status.Final()
		}
		return &channeltest.Env{
			Router: router, Channel: ad, Target: emailTarget(ana),
			Text: func(tg domain.Target) string {
				var b strings.Builder
				for _, m := range thread(isFinal(tg)) {
					b.WriteString(m.Parts()["text/plain"])
				}
				return b.String()
			},
			Live: func(tg domain.Target) bool {
				ms := thread(isFinal(tg))
				return len(ms) > 0 && len(linkRe.FindAllString(ms[len(ms)-1].Parts()["text/plain"], -1)) > 0
			},
			Count: func(domain.Target) int {
				n := 0
				for _, m := range thread(false) {
					if !strings.HasPrefix(m.Header().Get("Subject"), "Re: ") {
						n++
					}
				}
				return n
			},
			Secrets: []string{smtpPass, linkKey},
			Logs:    logs,
		}
	})
}

// waitingChannel is the adapter whose Post returns once the mail arrived.
type waitingChannel struct {
	*Adapter
	delivered func() bool
}

func (w waitingChannel) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	out, err := w.Adapter.Post(ctx, q, t)
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && !w.delivered() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return out, err
}
