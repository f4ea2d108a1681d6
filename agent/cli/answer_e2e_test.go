package cli_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func threeItems(run string) *domain.AskRequest {
	return &domain.AskRequest{RunID: run, AgentID: "bot", Questions: []domain.Item{
		{Question: "Which region?", Options: []domain.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}},
		{Question: "Which checks?", MultiSelect: true, Options: []domain.Option{{Label: "lint"}, {Label: "test"}, {Label: "e2e"}}},
		{Question: "How many replicas?"}}}
}

// A number typed for an open-ended item is the answer, never "Cancel": a
// question is dismissed only on purpose (askbridge questions cancel).
func TestE2EAnswerNeverCancelsByNumber(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")
	ctx := t.Context()

	a, err := c.Ask(ctx, threeItems("run-a"))
	require.NoError(t, err)
	r := runBridge(t, srv, "questions", "answer", a.ID, "2", "1,3", "1")
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err := c.Get(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusAnswered, q.Status, "the question was dismissed instead of answered")
	assert.Equal(t, map[string]string{"Which region?": "us-east-1", "Which checks?": "lint, e2e", "How many replicas?": "1"}, q.Answers)

	// Free text that looks like a number, for an item with options: --text N=…
	b, err := c.Ask(ctx, threeItems("run-b"))
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", b.ID, "--text", "1=3", "2", "--text", "3=12")
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err = c.Get(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Which region?": "3", "Which checks?": "test", "How many replicas?": "12"}, q.Answers)

	// The number after the last option is no longer "Cancel": a usage error
	// that says how to dismiss, and the question stays pending.
	appr, err := c.Ask(ctx, &domain.AskRequest{RunID: "run-c", AgentID: "bot", Kind: domain.KindApproval,
		Questions: []domain.Item{{Question: "Allow Bash: rm -rf build?", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}}})
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", appr.ID, "3")
	assert.Equal(t, 2, r.code, r.stdout.String())
	assert.Contains(t, r.stderr.String(), "askbridge questions cancel")
	q, err = c.Get(ctx, appr.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusPending, q.Status)
	show := runBridge(t, srv, "questions", "show", appr.ID)
	assert.NotContains(t, show.stdout.String(), "3) Cancel")

	// Open-ended single item: a bare number is the answer too.
	one, err := c.Ask(ctx, &domain.AskRequest{RunID: "run-d", AgentID: "bot", Question: "How many?"})
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", one.ID, "1")
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err = c.Get(ctx, one.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	assert.Equal(t, "1", q.Answers["How many?"])

	// Dismissing stays one deliberate command away, with a note if wanted.
	r = runBridge(t, srv, "questions", "cancel", appr.ID, "--note", "rolled back instead")
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err = c.Get(ctx, appr.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusCancelled, q.Status)
	assert.Equal(t, "rolled back instead", q.CancelNote)
}

// Every question of a project used to have the same short id (its
// project's hash): the ask message, list and audit showed "aefd3536…" for
// all of them. Now each differs, and any unique prefix names a question.
func TestE2EShortIDsAreDistinctAndAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "demo")
	ctx := t.Context()
	shorts := map[string]bool{}
	var asked []*client.Asked
	for i := range 6 {
		a, err := c.Ask(ctx, &domain.AskRequest{RunID: fmt.Sprintf("run-%d", i), AgentID: "bot",
			Question: fmt.Sprintf("Proceed with step %d?", i), Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
		require.NoError(t, err)
		m := regexp.MustCompile(`^Question (\w+)… sent`).FindStringSubmatch(a.Message)
		require.NotNil(t, m, a.Message)
		assert.True(t, strings.HasPrefix(a.ID, m[1]), "the ask message shows the id's start: %s / %s", m[1], a.ID)
		shorts[m[1]] = true
		asked = append(asked, a)
	}
	assert.Len(t, shorts, 6, "the ask messages show one short id per question")

	env := []string{"BRIDGE_PROJECT=demo"}
	list := runBridgeEnv(t, srv, env, "questions", "list")
	require.Equal(t, 0, list.code, list.stderr.String())
	for _, a := range asked {
		assert.Contains(t, list.stdout.String(), a.ID[:8]+"  ", "list shows the short id")
	}

	show := runBridgeEnv(t, srv, env, "questions", "show", asked[2].ID[:8])
	require.Equal(t, 0, show.code, show.stderr.String())
	assert.Contains(t, show.stdout.String(), asked[2].ID)
	ans := runBridgeEnv(t, srv, env, "questions", "answer", asked[3].ID[:6], "1")
	require.Equal(t, 0, ans.code, ans.stderr.String())
	q, err := c.Get(ctx, asked[3].ID)
	require.NoError(t, err)
	assert.Equal(t, "Yes", q.Answers["Proceed with step 3?"])
	audit := runBridgeEnv(t, srv, env, "questions", "audit")
	require.Equal(t, 0, audit.code, audit.stderr.String())
	for _, a := range asked {
		assert.Contains(t, audit.stdout.String(), a.ID[:8], "the audit table tells the questions apart")
	}
}

func runBridgeEnv(t *testing.T, srv *bridgetest.Server, env []string, args ...string) *proc {
	t.Helper()
	return startEnv(t, srv, env, args...).wait(t)
}
