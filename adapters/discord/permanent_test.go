package discord

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// TestFinishingADeletedCopyIsAPermanentError: a person deleted the
// question's message; Finish says so with an error the router does not
// retry (as Slack's adapter does), and the router edits it once.
func TestFinishingADeletedCopyIsAPermanentError(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), func(rc *lifecycle.RouterConfig, _ *Config) {
		rc.CopyRetryBackoff, rc.CopyRetryFor = time.Millisecond, 500*time.Millisecond
	})
	q := e.ask(&domain.AskRequest{Questions: []domain.Item{authItem()}})
	f.Forget(e.copyOf(q))

	err := e.ad.Finish(context.Background(), q, q.Targets[0])
	if err == nil || !lifecycle.IsPermanent(err) {
		t.Fatalf("finishing a deleted copy: %v; want a permanent error", err)
	}
	if _, err := e.router.Cancel(context.Background(), "ops", q.ID, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.router.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("edit"); n != 2 {
		t.Errorf("%d edits of the deleted copy; want 2 (one by hand, one by the router, no retries)", n)
	}
}

func TestDiscordFailureClasses(t *testing.T) {
	for _, c := range []struct {
		e    *apiError
		want bool
	}{
		{&apiError{Status: 404, Code: 10008}, true},
		{&apiError{Status: 404, Code: 10003}, true},
		{&apiError{Status: 403, Code: 50001}, true},
		{&apiError{Status: 403, Code: 50013}, true},
		{&apiError{Status: 400, Code: 50035}, true},
		{&apiError{Status: 401}, true},
		{&apiError{Status: http.StatusTooManyRequests}, false},
		{&apiError{Status: 500}, false},
		{&apiError{Status: 502}, false},
		{&apiError{Err: context.DeadlineExceeded}, false},
	} {
		if got := lifecycle.IsPermanent(c.e); got != c.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", c.e, got, c.want)
		}
	}
}
