package lifecycle_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAskCannotMakeItsApprovalAllowAtTheDeadline: an agent cannot approve
// its own action by waiting. An approval whose own ask would make it
// allowed when nobody answers — on_timeout.answer naming its allow option,
// or use_defaults (its own or its route's) with its allow option marked
// default — is refused (400 invalid) naming the field and the route setting
// that would do it, and nothing is asked. A route's on_timeout may allow:
// that is the operator's configuration. Both stores, every entry point
// (API, MCP, hook, CLI, clients all ask through Router.Ask).
func TestAskCannotMakeItsApprovalAllowAtTheDeadline(t *testing.T) {
	stores := map[string]func(t *testing.T) lifecycle.Store{
		"store": func(t *testing.T) lifecycle.Store {
			st, err := store.Open(ctx, store.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		},
		"native": func(t *testing.T) lifecycle.Store {
			st, err := native.Open(native.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) { askCannotAllowAtDeadline(t, open(t)) })
	}
}

func askCannotAllowAtDeadline(t *testing.T, st lifecycle.Store) {
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	routes := []domain.Route{
		{Name: "defaults", OnTimeout: &domain.OnTimeout{UseDefaults: true}},
		{Name: "allow-at-deadline", OnTimeout: &domain.OnTimeout{Answer: "Allow"}},
	}
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: c, Routes: routes, HasWebhookSecret: func(string) bool { return true }})
	t.Cleanup(func() { router.Close(ctx) })

	ask := func(action bool, opts ...domain.Option) *domain.AskRequest {
		req := &domain.AskRequest{Kind: domain.KindApproval, Question: "Run rm -rf build?",
			Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}
		if len(opts) > 0 {
			req.Options = opts
		}
		if action {
			req.Action = &domain.Action{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)}
		}
		return req
	}
	allowDefault := []domain.Option{{Label: "Allow", Default: true}, {Label: "Deny"}}
	refused := []struct {
		name  string
		req   func(action bool) *domain.AskRequest
		field string
	}{
		{"on_timeout answer Allow", func(a bool) *domain.AskRequest {
			r := ask(a)
			r.OnTimeout = &domain.OnTimeout{Answer: "Allow"}
			return r
		}, "on_timeout"},
		{"on_timeout answer as people type it", func(a bool) *domain.AskRequest {
			r := ask(a)
			r.OnTimeout = &domain.OnTimeout{Answer: " allow. "}
			return r
		}, "on_timeout"},
		{"two unknown labels: the first allows", func(a bool) *domain.AskRequest {
			r := ask(a, domain.Option{Label: "Ship it"}, domain.Option{Label: "Hold"})
			r.OnTimeout = &domain.OnTimeout{Answer: "Ship it"}
			return r
		}, "on_timeout"},
		{"a gate that needs two approvals", func(a bool) *domain.AskRequest {
			r := ask(a, domain.Option{Label: "Approve"}, domain.Option{Label: "Reject"})
			two := 2
			r.Kind, r.ApprovalsRequired, r.OnTimeout = "", &two, &domain.OnTimeout{Answer: "Approve"}
			return r
		}, "on_timeout"},
		{"use_defaults with Allow the default", func(a bool) *domain.AskRequest {
			r := ask(a, allowDefault...)
			r.OnTimeout = &domain.OnTimeout{UseDefaults: true}
			return r
		}, "questions[0].options[0].default"},
		{"the route's use_defaults with Allow the default", func(a bool) *domain.AskRequest {
			r := ask(a, allowDefault...)
			r.Route = "defaults"
			return r
		}, "questions[0].options[0].default"},
	}
	run := 0
	for _, action := range []bool{false, true} {
		for _, cs := range refused {
			run++
			req := cs.req(action)
			req.RunID = fmt.Sprintf("r%d", run)
			what := fmt.Sprintf("%s (action %t)", cs.name, action)
			res, err := router.Ask(ctx, "p", req, "")
			if err == nil {
				// What the person never saw happen: at the deadline the
				// approval is recorded allowed, nobody involved.
				c.add(domain.DefaultTimeout + time.Second)
				_, _ = router.ExpireDue(ctx)
				q, _ := router.Question(ctx, "p", res.Question.ID)
				t.Errorf("%s: the ask was accepted, and at the deadline the approval was %s %q by %v, decision %+v",
					what, q.Status, q.Response, q.RespondedBy, q.Decision)
				continue
			}
			assert.Equal(t, domain.EInvalid, domain.ErrorCode(err), what)
			problem := detailOf(t, err, cs.field)
			assert.Contains(t, problem, "routes[].on_timeout", "%s: the route setting that would do it", what)
			assert.Contains(t, problem, `{answer: "`, what)
			qs, err := router.RunQuestions(ctx, "p", req.RunID)
			require.NoError(t, err)
			assert.Empty(t, qs, "%s: nothing is asked", what)
		}
	}

	// What an ask may do, and what the operator may.
	accepted := []struct {
		name string
		req  *domain.AskRequest
		want string // behaviour at the deadline: the answer recorded, or "expired"
	}{
		{"on_timeout answer Deny", func() *domain.AskRequest {
			r := ask(true)
			r.OnTimeout = &domain.OnTimeout{Answer: "Deny"}
			return r
		}(), "Deny"},
		{"Allow pre-selected, no on_timeout", ask(true, allowDefault...), "expired"},
		{"the route allows at the deadline", func() *domain.AskRequest {
			r := ask(true)
			r.Route = "allow-at-deadline"
			return r
		}(), "Allow"},
	}
	for _, cs := range accepted {
		run++
		cs.req.RunID = fmt.Sprintf("r%d", run)
		res, err := router.Ask(ctx, "p", cs.req, "")
		require.NoError(t, err, cs.name)
		c.add(domain.DefaultTimeout + time.Second)
		_, err = router.ExpireDue(ctx)
		require.NoError(t, err)
		q, err := router.Question(ctx, "p", res.Question.ID)
		require.NoError(t, err)
		if cs.want == "expired" {
			assert.Equal(t, domain.StatusExpired, q.Status, cs.name)
			continue
		}
		assert.Equal(t, domain.StatusAnswered, q.Status, cs.name)
		assert.Equal(t, cs.want, q.Response, cs.name)
		require.NotNil(t, q.Decision, cs.name)
		assert.Equal(t, strings.ToLower(cs.want), q.Decision.Behavior, cs.name)
	}
}
