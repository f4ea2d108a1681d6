package teams

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestAppTokenCachedUntilNearExpiry: many Connector calls, some at once,
// take one app token; five minutes before it expires the next call fetches
// a new one. Wrong credentials are a permanent error that names the
// settings and never the secret.
func TestAppTokenCachedUntilNearExpiry(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, nil, func(c *Config) { c.Now = clock })
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.ask(t, domain.AskRequest{RunID: "run-" + string(rune('a'+i)), Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
		}()
	}
	wg.Wait()
	if n := e.F.Calls(faketeams.OpToken); n != 1 {
		t.Errorf("8 posts fetched %d app tokens, want 1", n)
	}
	mu.Lock()
	now = now.Add(3599*time.Second - tokenEarly + time.Second)
	mu.Unlock()
	e.ask(t, domain.AskRequest{RunID: "run-late", Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	if n := e.F.Calls(faketeams.OpToken); n != 2 {
		t.Errorf("a post 5 minutes before the token expires fetched %d tokens in all, want 2", n)
	}

	bad := newEnv(t, nil, func(c *Config) { c.AppSecret = "wrong-secret-value" })
	q := bad.ask(t, domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Targets: []domain.Target{}})
	_, err := bad.A.Post(context.Background(), q, domain.Target{Platform: Platform, Channel: testChannel})
	if err == nil || !lifecycle.IsPermanent(err) {
		t.Fatalf("wrong credentials: %v, want a permanent error", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "invalid_client") || !strings.Contains(msg, "TEAMS_APP_SECRET") || strings.Contains(msg, "wrong-secret-value") {
		t.Errorf("the error: %s", msg)
	}
	if n := bad.F.Calls(faketeams.OpToken); n != 1 {
		t.Errorf("wrong credentials were tried %d times, want once (no retry can fix them)", n)
	}
}

// TestRemindInThread: a reminder is a reply in the copy's thread, naming
// who may answer.
func TestRemindInThread(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(t, domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}},
		Responders: &domain.Responders{Users: []string{"teams:aad-alice"}}})
	if err := e.A.Remind(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatal(err)
	}
	msgs := e.F.Activities(testChannel)
	if len(msgs) != 2 {
		t.Fatalf("%d activities in the channel, want the card and the reminder", len(msgs))
	}
	r := msgs[1]
	if r.Thread != q.Targets[0].MessageTS || !strings.Contains(r.Text, "Ship it?") || !strings.Contains(r.Text, "aad-alice") {
		t.Errorf("the reminder: %+v", r)
	}
}
