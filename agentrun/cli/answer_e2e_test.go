package cli_test

import (
	"testing"

	"github.com/askbridge/askbridge/agentrun/bridgetest"
	"github.com/askbridge/askbridge/agentrun/client"
	"github.com/askbridge/askbridge/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func threeItems(run string) *core.AskRequest {
	return &core.AskRequest{RunID: run, AgentID: "bot", Questions: []core.Item{
		{Question: "Which region?", Options: []core.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}},
		{Question: "Which checks?", MultiSelect: true, Options: []core.Option{{Label: "lint"}, {Label: "test"}, {Label: "e2e"}}},
		{Question: "How many replicas?"}}}
}

// A number typed for an open-ended item is the answer, never "Cancel": a
// question is dismissed only on purpose (bridge questions cancel).
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
	require.Equal(t, core.StatusAnswered, q.Status, "the question was dismissed instead of answered")
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
	appr, err := c.Ask(ctx, &core.AskRequest{RunID: "run-c", AgentID: "bot", Kind: core.KindApproval,
		Questions: []core.Item{{Question: "Allow Bash: rm -rf build?", Options: []core.Option{{Label: "Allow"}, {Label: "Deny"}}}}})
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", appr.ID, "3")
	assert.Equal(t, 2, r.code, r.stdout.String())
	assert.Contains(t, r.stderr.String(), "bridge questions cancel")
	q, err = c.Get(ctx, appr.ID)
	require.NoError(t, err)
	assert.Equal(t, core.StatusPending, q.Status)
	show := runBridge(t, srv, "questions", "show", appr.ID)
	assert.NotContains(t, show.stdout.String(), "3) Cancel")

	// Open-ended single item: a bare number is the answer too.
	one, err := c.Ask(ctx, &core.AskRequest{RunID: "run-d", AgentID: "bot", Question: "How many?"})
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", one.ID, "1")
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err = c.Get(ctx, one.ID)
	require.NoError(t, err)
	assert.Equal(t, core.StatusAnswered, q.Status)
	assert.Equal(t, "1", q.Answers["How many?"])

	// Dismissing stays one deliberate command away.
	r = runBridge(t, srv, "questions", "cancel", appr.ID)
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err = c.Get(ctx, appr.ID)
	require.NoError(t, err)
	assert.Equal(t, core.StatusCancelled, q.Status)
}
