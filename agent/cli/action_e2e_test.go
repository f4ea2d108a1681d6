package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func toolAsk(run, tool, input string, suggestions ...string) *domain.AskRequest {
	a := &domain.Action{Tool: tool, Input: json.RawMessage(input)}
	for _, s := range suggestions {
		a.Suggestions = append(a.Suggestions, json.RawMessage(s))
	}
	return &domain.AskRequest{RunID: run, AgentID: "bot", Question: "Allow " + tool + "?", Action: a,
		Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}
}

// TestE2EApprovalActionOnTheCLI: show prints the whole action with its
// diff; --edit, --always and --deny reach the agent's decision.
func TestE2EApprovalActionOnTheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")
	ctx := t.Context()

	var old, new strings.Builder
	for i := range 300 {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&new, "line %d changed\n", i)
	}
	in, _ := json.Marshal(map[string]string{"file_path": "/src/big.txt", "old_string": old.String(), "new_string": new.String()})
	edit, err := c.Ask(ctx, toolAsk("run-e", "Edit", string(in)))
	require.NoError(t, err)
	show := runBridge(t, srv, "questions", "show", edit.ID)
	require.Equal(t, 0, show.code, show.stderr.String())
	out := show.stdout.String()
	assert.Contains(t, out, "action: Edit   digest: sha256:")
	assert.Contains(t, out, "--- a/src/big.txt\n+++ b/src/big.txt\n@@ -1,300 +1,300 @@\n")
	assert.Equal(t, 300, strings.Count(out, "\n-line "), "every removed line shown")
	assert.Equal(t, 300, strings.Count(out, "\n+line "), "every added line shown")

	// --edit key=value changes one argument and approves.
	bash, err := c.Ask(ctx, toolAsk("run-b", "Bash", `{"command":"rm -rf build","description":"clean"}`,
		`{"type":"setMode","mode":"acceptEdits","destination":"session"}`))
	require.NoError(t, err)
	show = runBridge(t, srv, "questions", "show", bash.ID)
	assert.Contains(t, show.stdout.String(), `"command": "rm -rf build"`)
	// The always-allow choice in the words of every other surface, not as JSON.
	assert.Contains(t, show.stdout.String(), "1) Allow, and don't ask again this session for file edits (acceptEdits mode)\n")
	r := runBridge(t, srv, "questions", "answer", bash.ID, "--edit", "command=rm -rf build/tmp", "--always", "1")
	require.Equal(t, 0, r.code, r.stderr.String())
	assert.Contains(t, r.stdout.String(), "always allowed: Allow, and don't ask again this session for file edits (acceptEdits mode)\n")
	q, err := c.Get(ctx, bash.ID)
	require.NoError(t, err)
	require.NotNil(t, q.Decision)
	assert.Equal(t, "allow", q.Decision.Behavior)
	assert.JSONEq(t, `{"command":"rm -rf build/tmp","description":"clean"}`, string(q.Decision.Input))
	require.Len(t, q.Decision.Rules, 1)
	show = runBridge(t, srv, "questions", "show", bash.ID)
	assert.Contains(t, show.stdout.String(), "decision: allow with edited arguments")

	// --deny in one step.
	deny, err := c.Ask(ctx, toolAsk("run-d", "Bash", `{"command":"git push --force"}`))
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", deny.ID, "--deny", "never force-push main")
	require.Equal(t, 0, r.code, r.stderr.String())
	q, err = c.Get(ctx, deny.ID)
	require.NoError(t, err)
	assert.Equal(t, &domain.Decision{Behavior: "deny", Digest: q.Action.Digest, Message: "never force-push main"}, q.Decision)

	// Option 2 with a note denies, and says so as --deny does; option 1 allows.
	noted, err := c.Ask(ctx, toolAsk("run-n", "Bash", `{"command":"make deploy"}`))
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", noted.ID, "2", "-m", "not on a Friday")
	require.Equal(t, 0, r.code, r.stderr.String())
	assert.Equal(t, "denied with a note \"Allow Bash?\": not on a Friday\n", r.stdout.String())
	allowed, err := c.Ask(ctx, toolAsk("run-y", "Bash", `{"command":"make test"}`))
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", allowed.ID, "1")
	require.Equal(t, 0, r.code, r.stderr.String())
	assert.Equal(t, "allowed \"Allow Bash?\": Allow\n", r.stdout.String())

	// A dismissed question shows who dismissed it and the note.
	dismissed, err := c.Ask(ctx, toolAsk("run-c", "Bash", `{"command":"make bench"}`))
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "cancel", dismissed.ID, "--note", "done by hand")
	require.Equal(t, 0, r.code, r.stderr.String())
	show = runBridge(t, srv, "questions", "show", dismissed.ID)
	assert.Contains(t, show.stdout.String(), "\nDismissed by ")
	assert.Contains(t, show.stdout.String(), ` — "done by hand"`)

	// Bad --always: a usage error naming the choices.
	other, err := c.Ask(ctx, toolAsk("run-o", "Bash", `{"command":"ls"}`))
	require.NoError(t, err)
	r = runBridge(t, srv, "questions", "answer", other.ID, "--always", "2")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr.String(), `offers 0 "always allow" choice(s)`)
}
