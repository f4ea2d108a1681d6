package lifecycle_test

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func auditTypes(t *testing.T, f *fixture, project, id string) []string {
	t.Helper()
	trail, err := f.store.Audit(ctx, project, id, 0)
	require.NoError(t, err)
	var out []string
	for _, e := range trail {
		out = append(out, e.Type)
	}
	return out
}

// TestRouteAutoAllow: a route's auto_allow rule answers a matching
// approval at once, posts nothing, and says so in the audit trail; other
// commands are asked as usual.
func TestRouteAutoAllow(t *testing.T) {
	f := newFixture(t, "", domain.Route{Name: "dev", Targets: []domain.Target{{Platform: "slack", Channel: "C1"}},
		AutoAllow: []string{"Bash(git status*)", "Read"}})
	req := toolApproval("r1", "Bash", `{"command":"git status --short"}`)
	req.Route = "dev"
	res, err := f.router.Ask(ctx, "p", req, "")
	require.NoError(t, err)
	q := res.Question
	assert.Equal(t, domain.StatusAnswered, q.Status)
	require.NotNil(t, q.Decision)
	assert.Equal(t, "allow", q.Decision.Behavior)
	assert.Equal(t, "Bash(git status*)", q.Decision.AutoRule)
	assert.Equal(t, q.Action.Digest, q.Decision.Digest)
	assert.Contains(t, res.Message, "Bash(git status*)")
	f.slack.mu.Lock()
	assert.Empty(t, f.slack.posted)
	f.slack.mu.Unlock()
	assert.Contains(t, auditTypes(t, f, "p", q.ID), "auto_approved")

	req = toolApproval("r1", "Read", `{"file_path":"/etc/hosts"}`)
	req.Route = "dev"
	res, err = f.router.Ask(ctx, "p", req, "")
	require.NoError(t, err)
	assert.Equal(t, "Read", res.Question.Decision.AutoRule)

	req = toolApproval("r1", "Bash", `{"command":"git push --force"}`)
	req.Route = "dev"
	res, err = f.router.Ask(ctx, "p", req, "")
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, res.Question.Status)
	f.slack.mu.Lock()
	assert.Len(t, f.slack.posted, 1)
	f.slack.mu.Unlock()
}

// TestAlwaysAllowRemembersForTheRun: once a person allowed an action
// choosing "always allow", the next identical request of that run is
// answered at once; another run is still asked. An addRules suggestion
// covers the commands its rule names.
func TestAlwaysAllowRemembersForTheRun(t *testing.T) {
	f := newFixture(t, "")
	sugg := `{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"session"}`
	res, err := f.router.Ask(ctx, "p", toolApproval("run-a", "Bash", `{"command":"npm test"}`, sugg), "")
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "p", res.Question.ID, domain.RespondRequest{Rule: intp(0)}, slackP("alice"))
	require.NoError(t, err)

	again, err := f.router.Ask(ctx, "p", toolApproval("run-a", "Bash", `{"command":"npm test"}`, sugg), "")
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, again.Question.Status)
	assert.Contains(t, again.Question.Decision.AutoRule, "always allow (this run)")
	assert.Contains(t, auditTypes(t, f, "p", again.Question.ID), "auto_approved")

	wider, err := f.router.Ask(ctx, "p", toolApproval("run-a", "Bash", `{"command":"npm test -- --watch=false"}`), "")
	require.NoError(t, err)
	assert.Equal(t, "Bash(npm test*)", wider.Question.Decision.AutoRule)

	other, err := f.router.Ask(ctx, "p", toolApproval("run-b", "Bash", `{"command":"npm test"}`), "")
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, other.Question.Status, "another run is asked")

	// A plain Allow (no rule chosen) is not remembered.
	res, err = f.router.Ask(ctx, "p", toolApproval("run-c", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	_, err = f.router.Answer(ctx, "p", res.Question.ID, pick("Allow"), slackP("alice"))
	require.NoError(t, err)
	res, err = f.router.Ask(ctx, "p", toolApproval("run-c", "Bash", `{"command":"ls"}`), "")
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, res.Question.Status)
}

func TestAutoAllowRuleSyntax(t *testing.T) {
	a := &domain.Action{Tool: "mcp__github__create_issue", Input: []byte(`{"title":"x"}`)}
	assert.True(t, domain.RuleMatches("mcp__github__*", a))
	assert.False(t, domain.RuleMatches("mcp__gitlab__*", a))
	assert.True(t, domain.RuleMatches("Edit(/src/*.go)", &domain.Action{Tool: "Edit", Input: []byte(`{"file_path":"/src/main.go"}`)}))
	assert.False(t, domain.RuleMatches("Edit(/src/*.go)", &domain.Action{Tool: "Edit", Input: []byte(`{"file_path":"/etc/passwd"}`)}))
	assert.NoError(t, domain.CheckAutoAllowRule("Bash(git status*)"))
	assert.Error(t, domain.CheckAutoAllowRule("Bash("))
	assert.Error(t, domain.CheckAutoAllowRule("Bash()"))
}
