package hook_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/hook"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Parallel tool calls of one turn (issue 39): the hook of the first call
// asks for every sibling its configuration would ask for, as one batch;
// each later hook re-attaches to its own call's record.

type call struct {
	id, name string
	input    map[string]any
}

func bashCalls(prefix string, cmds ...string) []call {
	var out []call
	for i, c := range cmds {
		out = append(out, call{fmt.Sprintf("toolu_%s_%d", prefix, i+1), "Bash", map[string]any{"command": c, "description": "step " + fmt.Sprint(i+1)}})
	}
	return out
}

// assistantMessage is one assistant message with several tool_use blocks
// as Claude Code writes it to the transcript: one line per content block,
// all with the message's id (split), or the whole message on one line.
func assistantMessage(t *testing.T, msgID string, split bool, calls ...call) []string {
	t.Helper()
	line := func(uuid string, blocks ...any) string {
		b, err := json.Marshal(map[string]any{"type": "assistant", "uuid": uuid, "message": map[string]any{
			"id": msgID, "role": "assistant", "content": blocks}})
		require.NoError(t, err)
		return string(b)
	}
	var blocks []any
	for _, c := range calls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input})
	}
	if !split {
		return []string{line("a-"+msgID, blocks...)}
	}
	var out []string
	for i, b := range blocks {
		out = append(out, line(fmt.Sprintf("a-%s-%d", msgID, i), b))
	}
	return out
}

// preToolUse is the PreToolUse event of one call.
func preToolUse(t *testing.T, session, transcript string, c call) string {
	e := fixture(t, "pretooluse-bash.json")
	e["session_id"], e["transcript_path"], e["tool_use_id"], e["tool_name"], e["tool_input"] = session, transcript, c.id, c.name, c.input
	return e.json(t)
}

func runQuestions(t *testing.T, c *client.Client, session string) []*domain.Question {
	t.Helper()
	qs, err := c.RunQuestions(t.Context(), session)
	require.NoError(t, err)
	return qs
}

func waitForRun(t *testing.T, c *client.Client, session string, n int) []*domain.Question {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		if qs := runQuestions(t, c, session); len(qs) >= n {
			return qs
		}
	}
	t.Fatalf("session %s: fewer than %d approvals asked", session, n)
	return nil
}

// TestFirstHookAsksTheTurnsCallsAsOneBatch: three rm calls and an ls in
// one assistant message; the PreToolUse hook of the first asks for the
// three rm calls (those its --approve pattern matches) at once, one batch.
// Allow all lets all three run: the second and third hooks return at once
// with no new approval.
func TestFirstHookAsksTheTurnsCallsAsOneBatch(t *testing.T) {
	srv, c := serve(t)
	for _, split := range []bool{true, false} {
		t.Run(fmt.Sprintf("split=%v", split), func(t *testing.T) {
			session := fmt.Sprintf("batch-%v", split)
			calls := bashCalls(session, "rm -rf build1", "ls", "rm -rf build2", "rm -rf build3")
			tr := newTranscriptFile(t)
			tr.append(t, assistantMessage(t, "msg_"+session, split, calls...)...)

			ch := inProcess(t, srv, preToolUse(t, session, tr.path, calls[0]), "--approve", "Bash(rm *)", "--timeout", "1m")
			qs := waitForRun(t, c, session, 3)
			time.Sleep(200 * time.Millisecond)
			qs = runQuestions(t, c, session)
			require.Len(t, qs, 3, "the three rm calls, not ls")
			for i, want := range []string{"rm -rf build1", "rm -rf build2", "rm -rf build3"} {
				assert.Equal(t, "Allow Bash: "+want+"?", qs[i].Questions[0].Question)
				assert.Equal(t, qs[0].BatchID, qs[i].BatchID, "one batch")
				assert.Equal(t, domain.StatusPending, qs[i].Status)
			}
			assert.Equal(t, []string{calls[0].id, calls[2].id, calls[3].id},
				[]string{qs[0].Action.CallID, qs[1].Action.CallID, qs[2].Action.CallID}, "each keyed by its tool_use_id")

			_, err := c.DecideBatch(t.Context(), qs[0].BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow})
			require.NoError(t, err)
			r := finished(t, ch, 10*time.Second)
			require.Equal(t, hook.ExitOK, r.code, r.stderr)
			assert.Contains(t, r.stdout, `"permissionDecision":"allow"`)

			// Claude Code runs call 1 and ls, then the hooks of the others.
			tr.append(t, toolResultLine(calls[0].id, "", false), toolResultLine(calls[1].id, "build1 src", false))
			for _, next := range calls[2:] {
				start := time.Now()
				r := finished(t, inProcess(t, srv, preToolUse(t, session, tr.path, next), "--approve", "Bash(rm *)", "--timeout", "1m"), 10*time.Second)
				require.Equal(t, hook.ExitOK, r.code, r.stderr)
				assert.Contains(t, r.stdout, `"permissionDecision":"allow"`, next.id)
				assert.Less(t, time.Since(start), 3*time.Second, "decided already: the hook returns at once")
				tr.append(t, toolResultLine(next.id, "", false))
			}
			assert.Len(t, runQuestions(t, c, session), 3, "no approval asked twice")
		})
	}
}

// TestEachHookGetsItsOwnCallsDecision: a per-call mix — allow, deny with
// a note, edit — reaches each call's hook as its own decision.
func TestEachHookGetsItsOwnCallsDecision(t *testing.T) {
	srv, c := serve(t)
	session := "mix"
	calls := bashCalls(session, "rm -rf build1", "rm -rf build2", "rm -rf build3")
	tr := newTranscriptFile(t)
	tr.append(t, assistantMessage(t, "msg_mix", true, calls...)...)
	ch := inProcess(t, srv, preToolUse(t, session, tr.path, calls[0]), "--approve", "Bash(rm *)")
	qs := waitForRun(t, c, session, 3)
	_, err := c.RespondText(t.Context(), qs[0].ID, "Allow")
	require.NoError(t, err)
	reason := "keep build2, it holds the release"
	_, err = c.Respond(t.Context(), qs[1].ID, domain.RespondRequest{Reason: &reason})
	require.NoError(t, err)
	_, err = c.Respond(t.Context(), qs[2].ID, domain.RespondRequest{EditedInput: json.RawMessage(`{"command":"rm -rf build3/tmp","description":"step 3"}`)})
	require.NoError(t, err)

	r := finished(t, ch, 10*time.Second)
	assert.Contains(t, r.stdout, `"permissionDecision":"allow"`)
	tr.append(t, toolResultLine(calls[0].id, "", false))
	r = finished(t, inProcess(t, srv, preToolUse(t, session, tr.path, calls[1]), "--approve", "Bash(rm *)"), 10*time.Second)
	assert.Contains(t, r.stdout, `"permissionDecision":"deny"`)
	assert.Contains(t, r.stdout, "keep build2, it holds the release")
	tr.append(t, toolResultLine(calls[1].id, "denied", true))
	r = finished(t, inProcess(t, srv, preToolUse(t, session, tr.path, calls[2]), "--approve", "Bash(rm *)"), 10*time.Second)
	assert.Contains(t, r.stdout, `"permissionDecision":"allow"`)
	assert.Contains(t, r.stdout, `"updatedInput":{"command":"rm -rf build3/tmp","description":"step 3"}`)
	assert.Len(t, runQuestions(t, c, session), 3)
}

// TestSiblingWithoutItsHookIsWithdrawn: a sibling asked in the first
// hook's batch whose own hook never comes (Claude Code let it run, or the
// turn ended) is withdrawn once the transcript shows it ended — by the
// session's next hook, or at once by a PostToolUse hook — and its copies
// say why.
func TestSiblingWithoutItsHookIsWithdrawn(t *testing.T) {
	srv, c := serve(t)
	session := "withdraw"
	calls := bashCalls(session, "rm -rf a", "rm -rf b", "rm -rf c")
	tr := newTranscriptFile(t)
	tr.append(t, assistantMessage(t, "msg_w", true, calls...)...)
	ch := inProcess(t, srv, preToolUse(t, session, tr.path, calls[0]), "--approve", "Bash(rm *)")
	qs := waitForRun(t, c, session, 3)
	_, err := c.RespondText(t.Context(), qs[0].ID, "Allow")
	require.NoError(t, err)
	require.Contains(t, finished(t, ch, 10*time.Second).stdout, `"allow"`)

	// Call b ran without its hook; call c's hook comes.
	tr.append(t, toolResultLine(calls[0].id, "", false), toolResultLine(calls[1].id, "", false))
	ch = inProcess(t, srv, preToolUse(t, session, tr.path, calls[2]), "--approve", "Bash(rm *)")
	require.Eventually(t, func() bool {
		q, err := c.Get(t.Context(), qs[1].ID)
		return err == nil && q.Status == domain.StatusCancelled
	}, 10*time.Second, 50*time.Millisecond, "b is withdrawn by the next hook")
	b, _ := c.Get(t.Context(), qs[1].ID)
	assert.Equal(t, domain.CancelAgent, b.CancelReason)
	assert.Equal(t, "Claude Code went on without asking about this call", b.CancelNote)
	cq, _ := c.Get(t.Context(), qs[2].ID)
	assert.Equal(t, domain.StatusPending, cq.Status, "c's own hook waits on it")
	_, err = c.RespondText(t.Context(), qs[2].ID, "Deny")
	require.NoError(t, err)
	assert.Contains(t, finished(t, ch, 10*time.Second).stdout, `"deny"`)

	// PostToolUse withdraws at once.
	calls = bashCalls("post", "rm -rf x", "rm -rf y")
	tr2 := newTranscriptFile(t)
	tr2.append(t, assistantMessage(t, "msg_p", true, calls...)...)
	ch = inProcess(t, srv, preToolUse(t, "post", tr2.path, calls[0]), "--approve", "Bash(rm *)")
	qs = waitForRun(t, c, "post", 2)
	_, err = c.RespondText(t.Context(), qs[0].ID, "Allow")
	require.NoError(t, err)
	finished(t, ch, 10*time.Second)
	post := fixture(t, "pretooluse-bash.json")
	post["hook_event_name"], post["session_id"], post["transcript_path"] = "PostToolUse", "post", tr2.path
	post["tool_use_id"], post["tool_input"], post["tool_response"] = calls[1].id, calls[1].input, map[string]any{"stdout": ""}
	r := finished(t, inProcess(t, srv, post.json(t)), 10*time.Second)
	assert.Equal(t, hook.ExitOK, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	y, _ := c.Get(t.Context(), qs[1].ID)
	assert.Equal(t, domain.StatusCancelled, y.Status)
}

// TestPermissionRequestAsksOnlyItsOwnCall: without --approve patterns a
// PermissionRequest hook cannot know which siblings Claude Code will let
// through, so it asks for its own call only.
func TestPermissionRequestAsksOnlyItsOwnCall(t *testing.T) {
	srv, c := serve(t)
	calls := bashCalls("perm", "rm -rf build1", "rm -rf build2")
	tr := newTranscriptFile(t)
	tr.append(t, assistantMessage(t, "msg_perm", true, calls...)...)
	perm := fixture(t, "permissionrequest-bash.json")
	perm["session_id"], perm["transcript_path"], perm["tool_input"] = "perm", tr.path, calls[0].input
	ch := inProcess(t, srv, perm.json(t))
	qs := waitForRun(t, c, "perm", 1)
	time.Sleep(300 * time.Millisecond)
	qs = runQuestions(t, c, "perm")
	require.Len(t, qs, 1)
	assert.Equal(t, calls[0].id, qs[0].Action.CallID, "the tool_use_id read from the transcript")
	_, err := c.RespondText(t.Context(), qs[0].ID, "Allow")
	require.NoError(t, err)
	assert.Contains(t, finished(t, ch, 10*time.Second).stdout, `"behavior":"allow"`)

	// With --approve patterns on the PermissionRequest hook, the matching
	// siblings are asked with it.
	calls = bashCalls("perm2", "rm -rf build1", "rm -rf build2")
	tr2 := newTranscriptFile(t)
	tr2.append(t, assistantMessage(t, "msg_perm2", true, calls...)...)
	perm["session_id"], perm["transcript_path"] = "perm2", tr2.path
	ch = inProcess(t, srv, perm.json(t), "--approve", "Bash(rm *)")
	qs = waitForRun(t, c, "perm2", 2)
	assert.Equal(t, qs[0].BatchID, qs[1].BatchID)
	_, err = c.DecideBatch(t.Context(), qs[0].BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow})
	require.NoError(t, err)
	assert.Contains(t, finished(t, ch, 10*time.Second).stdout, `"behavior":"allow"`)
}

// TestConcurrentHooksOfOneTurnShareTheirRecords: the three PreToolUse
// hooks of one turn started at once (each the "first") ask the same batch:
// three approvals, not nine, and each hook gets its own call's decision.
func TestConcurrentHooksOfOneTurnShareTheirRecords(t *testing.T) {
	srv, c := serve(t)
	session := "concurrent"
	calls := bashCalls(session, "rm -rf build1", "rm -rf build2", "rm -rf build3")
	tr := newTranscriptFile(t)
	tr.append(t, assistantMessage(t, "msg_c", true, calls...)...)
	var chs []<-chan result
	for _, cl := range calls {
		chs = append(chs, inProcess(t, srv, preToolUse(t, session, tr.path, cl), "--approve", "Bash(rm *)"))
	}
	qs := waitForRun(t, c, session, 3)
	time.Sleep(300 * time.Millisecond)
	qs = runQuestions(t, c, session)
	require.Len(t, qs, 3, "one approval per call")
	for i, q := range qs {
		assert.Equal(t, calls[i].id, q.Action.CallID, "in the order the model made the calls")
		assert.Equal(t, qs[0].BatchID, q.BatchID)
	}
	answers := map[string]string{calls[0].id: "Allow", calls[1].id: "Deny", calls[2].id: "Allow"}
	for _, q := range qs {
		_, err := c.RespondText(t.Context(), q.ID, answers[q.Action.CallID])
		require.NoError(t, err)
	}
	want := map[string]string{calls[0].id: "allow", calls[1].id: "deny", calls[2].id: "allow"}
	for i, ch := range chs {
		r := finished(t, ch, 10*time.Second)
		assert.Contains(t, r.stdout, `"permissionDecision":"`+want[calls[i].id]+`"`, "hook %d: %s", i+1, strings.TrimSpace(r.stdout+r.stderr))
	}
}
