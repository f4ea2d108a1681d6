package channeltest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
)

func opt(label, desc string) domain.Option { return domain.Option{Label: label, Description: desc} }

func authItem() domain.Item {
	return domain.Item{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
		opt("OAuth 2.0", "Standard"), opt("API key", "Simple")}}
}

// long is a text of n characters that starts with what a person would
// recognise.
func long(start string, n int) string {
	s := start + " " + strings.Repeat("lorem ipsum ", n/12+1)
	return string([]rune(s)[:n])
}

// shapes are the questions every adapter must post.
func shapes() map[string]domain.AskRequest {
	four := make([]domain.Item, domain.MaxItems)
	for i := range four {
		four[i] = domain.Item{Question: fmt.Sprintf("Question %d of four?", i+1), Header: fmt.Sprintf("Q%d", i+1)}
		for j := range domain.MaxOptions {
			four[i].Options = append(four[i].Options, opt(fmt.Sprintf("Choice %d.%d", i+1, j+1), "about it"))
		}
	}
	four[1].MultiSelect = true
	longest := make([]domain.Item, domain.MaxItems)
	for i := range longest {
		longest[i] = domain.Item{Question: long(fmt.Sprintf("Long question %d", i+1), domain.MaxQuestionLen),
			Header: long("H", domain.MaxHeaderLen), MultiSelect: i%2 == 1}
		for j := range domain.MaxOptions {
			longest[i].Options = append(longest[i].Options, domain.Option{
				Label:       long(fmt.Sprintf("Label %d.%d", i+1, j+1), domain.MaxLabelLen),
				Description: long("Description", domain.MaxDescriptionLen),
				Value:       long(fmt.Sprintf("v%d%d", i, j), domain.MaxValueLen)})
		}
	}
	return map[string]domain.AskRequest{
		"single-select": {Questions: []domain.Item{authItem()}},
		"multi-select": {Questions: []domain.Item{{Question: "Which regions?", Header: "Regions", MultiSelect: true,
			Options: []domain.Option{opt("eu-west", ""), opt("us-east", ""), opt("ap-south", "")}}}},
		"open-ended":      {Questions: []domain.Item{{Question: "What should the release be called?"}}},
		"four-by-four":    {Questions: four},
		"approval":        {Kind: domain.KindApproval, Question: "Deploy api v2.14 to production?", Options: []domain.Option{opt("Approve", ""), opt("Deny", "")}},
		"longest":         {Questions: longest, Context: long("Context", domain.MaxContextLen), AgentName: long("Agent", domain.MaxIDLen)},
		"longest-context": {Question: long("One long question", domain.MaxQuestionLen), Context: long("Context", domain.MaxContextLen)},
	}
}

func postEveryShape(t *testing.T, newEnv Factory) {
	for name, req := range shapes() {
		t.Run(name, func(t *testing.T) {
			s := start(t, newEnv)
			q := s.ask(req)
			c := s.copyOf(q)
			text := s.env.Text(c)
			// The start of every question is shown (long ones may be shortened).
			for _, it := range q.Questions {
				if want := string([]rune(it.Question)[:min(15, len([]rune(it.Question)))]); !strings.Contains(text, want) {
					t.Errorf("the copy does not show question %q:\n%s", want, text)
				}
			}
			if !s.env.Live(c) {
				t.Error("a pending question shows no controls")
			}
			if n := s.env.Count(c); n != 1 {
				t.Errorf("%d messages in the channel, want 1", n)
			}
		})
	}
}

func finishEveryOutcome(t *testing.T, newEnv Factory) {
	pick := func(label string) domain.RespondRequest { return domain.RespondRequest{Response: &label} }
	cases := []struct {
		name string
		req  domain.AskRequest
		end  func(s *suite, q *domain.Question)
		want []string // texts the finished copy shows
	}{
		{"answered", domain.AskRequest{Questions: []domain.Item{authItem()}}, func(s *suite, q *domain.Question) {
			s.answer(q, pick("API key"))
		}, []string{"alice", "API key"}},
		{"answered with free text", domain.AskRequest{Questions: []domain.Item{authItem()}}, func(s *suite, q *domain.Question) {
			s.answer(q, pick("mutual TLS, please"))
		}, []string{"alice", "mutual TLS, please"}},
		{"cancelled with a note", domain.AskRequest{Questions: []domain.Item{authItem()}}, func(s *suite, q *domain.Question) {
			if _, err := s.env.Router.CancelWithNote(context.Background(), "ops", q.ID, domain.CancelAgent, "superseded by run 7", nil); err != nil {
				t.Fatal(err)
			}
		}, []string{"superseded by run 7"}},
		{"expired", domain.AskRequest{Questions: []domain.Item{authItem()}}, func(s *suite, q *domain.Question) {
			s.expire()
		}, []string{"xpired"}},
		{"defaulted", domain.AskRequest{Questions: []domain.Item{authItem()}, OnTimeout: &domain.OnTimeout{Answer: "API key"}},
			func(s *suite, q *domain.Question) { s.expire() }, []string{"default", "API key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, newEnv)
			q := s.ask(c.req)
			c.end(s, q)
			s.settle()
			cp := s.copyOf(q)
			text := s.env.Text(cp)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the finished copy does not say %q:\n%s", w, text)
				}
			}
			if s.env.Live(cp) {
				t.Error("the finished copy still shows enabled controls")
			}
		})
	}
}

func (s *suite) answer(q *domain.Question, req domain.RespondRequest) {
	s.t.Helper()
	if _, err := s.env.Router.Answer(context.Background(), "ops", q.ID, req, s.person("alice")); err != nil {
		s.t.Fatalf("answer: %v", err)
	}
}

// expire moves the clock past every deadline and runs the expiry sweep.
func (s *suite) expire() {
	s.t.Helper()
	s.clock.Add(domain.MaxTimeout + time.Hour)
	if n, err := s.env.Router.ExpireDue(context.Background()); err != nil || n != 1 {
		s.t.Fatalf("expiring: %d, %v", n, err)
	}
}

func finishDeletedCopy(t *testing.T, newEnv Factory) {
	s := start(t, newEnv)
	q := s.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	c := s.copyOf(q)
	s.env.Delete(c)
	q.Status = domain.StatusExpired
	err := s.env.Channel.Finish(context.Background(), q, c)
	if err != nil {
		s.errs = append(s.errs, err)
		if !lifecycle.IsPermanent(err) {
			t.Errorf("finishing a deleted copy: %v; want nil or a permanent error, never a retryable one", err)
		}
	}
}

func postToMissingChannel(t *testing.T, newEnv Factory) {
	s := start(t, newEnv)
	q := s.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	_, err := s.env.Channel.Post(context.Background(), q, domain.Target{Platform: s.env.Target.Platform, Channel: s.env.Missing})
	if err == nil {
		t.Fatal("posting to a channel that does not exist succeeded")
	}
	s.errs = append(s.errs, err)
	if !lifecycle.IsPermanent(err) {
		t.Errorf("posting to a missing channel: %v; want a permanent error", err)
	}
}

func rateLimitAndServerErrors(t *testing.T, newEnv Factory) {
	s := start(t, newEnv)
	s.env.RateLimit(OpPost)
	s.env.Fail(OpPost, http.StatusBadGateway, 1)
	q := s.ask(domain.AskRequest{Questions: []domain.Item{authItem()}}) // fails the test if the post failed
	c := s.copyOf(q)
	if n := s.env.Count(c); n != 1 {
		t.Errorf("%d messages in the channel after a post through one 429 and one 502, want 1", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s.env.RateLimit(OpFinish)
	s.env.Fail(OpFinish, http.StatusServiceUnavailable, 2)
	q.Status, q.CancelReason = domain.StatusCancelled, domain.CancelAgent
	if err := s.env.Channel.Finish(ctx, q, c); err != nil {
		s.errs = append(s.errs, err)
		t.Fatalf("a finish through one 429 and two 503s: %v; want it retried within the adapter", err)
	}
	if s.env.Live(c) {
		t.Error("the copy still shows controls after Finish")
	}
}

func lastingOutage(t *testing.T, newEnv Factory) {
	s := start(t, newEnv)
	q := s.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	c := s.copyOf(q)
	s.env.Fail(OpFinish, http.StatusInternalServerError, 50)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q.Status = domain.StatusExpired
	err := s.env.Channel.Finish(ctx, q, c)
	if err == nil {
		t.Fatal("a finish during a lasting outage succeeded")
	}
	s.errs = append(s.errs, err)
	if lifecycle.IsPermanent(err) {
		t.Errorf("a lasting outage: %v is marked permanent; the router must retry it later", err)
	}
}

func platformUnreachable(t *testing.T, newEnv Factory) {
	s := start(t, newEnv)
	q := s.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	c := s.copyOf(q)
	gone := s.env.Unreachable()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := gone.Post(ctx, q, s.env.Target)
	if err == nil {
		t.Fatal("posting to an unreachable platform succeeded")
	}
	s.errs = append(s.errs, err)
	if lifecycle.IsPermanent(err) {
		t.Errorf("posting to an unreachable platform: %v is marked permanent", err)
	}
	q.Status = domain.StatusExpired
	if err := gone.Finish(ctx, q, c); err == nil || lifecycle.IsPermanent(err) {
		t.Errorf("finishing on an unreachable platform: %v; want a transient error", err)
	} else {
		s.errs = append(s.errs, err)
	}
}

// logBuffer collects the router's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// NewLog returns a logger for the adapter and a function reading what it
// wrote, for Env.Logs.
func NewLog() (*slog.Logger, func() string) {
	b := &logBuffer{}
	return b.logger(), b.String
}
