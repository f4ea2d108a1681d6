package api_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/server/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bashCall(id, cmd string) map[string]any {
	return map[string]any{"action": map[string]any{"tool": "Bash", "input": map[string]any{"command": cmd}, "call_id": id}}
}

func ids(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			out = append(out, x["id"].(string))
		}
	}
	return out
}

// TestApprovalBatchAPI: an agent asks three calls in one request, waits
// for the whole batch, an operator decides one call on its own and the
// rest with Allow all; the agent's wait returns every call decided, each
// with its own decision.
func TestApprovalBatchAPI(t *testing.T) {
	b := newBridge(t, opts{
		agents:    []api.Agent{{ID: "bot", Project: "ops", Token: "agent-tok", Tools: []string{"ask_user"}}},
		operators: []api.Operator{{ID: "alice", Projects: []string{"ops"}, Token: "op-tok"}},
	})
	base := "/api/projects/ops/approval-batches"
	body := map[string]any{"run_id": "turn-1", "approvals": []any{bashCall("toolu_1", "rm -rf build1"), bashCall("toolu_2", "rm -rf build2"), bashCall("toolu_3", "rm -rf build3")}}
	r := b.do("POST", base, "agent-tok", body)
	require.Equal(t, 201, r.status, string(r.raw))
	batch := r.body["batch_id"].(string)
	calls := ids(r.body["calls"])
	require.Len(t, calls, 3)
	assert.Equal(t, calls, ids(r.body["questions"]))
	assert.Equal(t, "pending", r.body["status"])
	assert.EqualValues(t, 3, r.body["pending"])
	assert.Contains(t, r.body["message"], "3 approval(s) asked")
	first := r.body["calls"].([]any)[0].(map[string]any)
	assert.Equal(t, "approval", first["kind"])
	assert.Equal(t, "Allow Bash: rm -rf build1?", first["questions"].([]any)[0].(map[string]any)["question"])
	assert.Equal(t, "toolu_1", first["action"].(map[string]any)["call_id"])
	assert.Equal(t, batch, first["batch_id"])

	// The same request again (a retried tool call) asks nothing new.
	again := b.do("POST", base, "agent-tok", body)
	assert.Equal(t, 200, again.status, string(again.raw))
	assert.Equal(t, calls, ids(again.body["calls"]))

	// An approval asked one by one for the same call re-attaches to it.
	one := b.do("POST", "/api/projects/ops/agent-questions", "agent-tok", map[string]any{"run_id": "turn-1",
		"question": "Allow Bash: rm -rf build2?", "options": []any{map[string]any{"label": "Allow"}, map[string]any{"label": "Deny"}},
		"action": map[string]any{"tool": "Bash", "input": map[string]any{"command": "rm -rf build2"}, "call_id": "toolu_2"}})
	assert.Equal(t, 200, one.status, string(one.raw))
	assert.Equal(t, calls[1], one.body["id"])

	var wg sync.WaitGroup
	var waited resp
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = b.do("GET", base+"/"+batch+"/wait?timeout=20s", "agent-tok", nil)
	}()
	time.Sleep(100 * time.Millisecond)

	r = b.do("POST", "/api/projects/ops/agent-questions/"+calls[1]+"/respond", "op-tok", map[string]any{"reason": "keep build2"})
	require.Equal(t, 202, r.status, string(r.raw))
	assert.Equal(t, 403, b.do("POST", base+"/"+batch+"/respond", "agent-tok", map[string]any{"decision": "allow"}).status, "agents do not decide")
	r = b.do("POST", base+"/"+batch+"/respond", "op-tok", map[string]any{"decision": "maybe", "reason": 3})
	assert.Equal(t, 400, r.status)
	r = b.do("POST", base+"/"+batch+"/respond", "op-tok", map[string]any{"decision": "maybe"})
	assert.Equal(t, 400, r.status)
	assert.Equal(t, []string{"decision"}, r.fields())
	r = b.do("POST", base+"/"+batch+"/respond", "op-tok", map[string]any{"decision": "allow"})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Equal(t, []string{calls[0], calls[2]}, ids(r.body["decided"]))
	assert.Equal(t, []string{calls[1]}, ids(r.body["already"]))
	assert.Empty(t, r.body["refused"])
	assert.Equal(t, "decided", r.body["status"])

	wg.Wait()
	require.Equal(t, 200, waited.status, string(waited.raw))
	assert.Equal(t, "decided", waited.body["status"])
	var behaviors []string
	for _, q := range waited.body["questions"].([]any) {
		behaviors = append(behaviors, q.(map[string]any)["decision"].(map[string]any)["behavior"].(string))
	}
	assert.Equal(t, []string{"allow", "deny", "allow"}, behaviors, "each call its own decision")

	r = b.do("POST", base+"/"+batch+"/respond", "op-tok", map[string]any{"decision": "deny"})
	assert.Equal(t, 409, r.status)
	assert.Equal(t, "already_answered", r.code())
	r = b.do("GET", base+"/"+batch, "op-tok", nil)
	assert.Equal(t, 200, r.status)
	assert.Equal(t, 404, b.do("GET", base+"/"+calls[1], "op-tok", nil).status, "a call that opened no batch names none")
	assert.Equal(t, 404, b.do("GET", base+"/nope", "op-tok", nil).status)
}

// TestApprovalBatchAPIRefusals: a bad call names its index and nothing is
// asked; a person allowed for no call changes nothing.
func TestApprovalBatchAPIRefusals(t *testing.T) {
	b := newBridge(t, opts{})
	base := "/api/projects/ops/approval-batches"
	r := b.do("POST", base, "", map[string]any{"run_id": "t", "approvals": []any{bashCall("a", "ls"), map[string]any{"action": map[string]any{"input": map[string]any{}}}}})
	assert.Equal(t, 400, r.status)
	assert.Equal(t, []string{"approvals[1].action.tool"}, r.fields())
	r = b.do("POST", base, "", map[string]any{"run_id": "t", "approvals": []any{}})
	assert.Equal(t, 400, r.status)
	assert.Equal(t, []string{"approvals"}, r.fields())
	r = b.do("POST", base, "", map[string]any{"run_id": "t", "approvals": []any{bashCall("a", "ls"), bashCall("a", "pwd")}})
	assert.Equal(t, 400, r.status)
	assert.Equal(t, []string{"approvals[1].action.call_id"}, r.fields())
	assert.Equal(t, 0, len(b.do("GET", "/api/projects/ops/agent-questions", "", nil).body["questions"].([]any)), "nothing asked")

	r = b.do("POST", base, "", map[string]any{"run_id": "t", "responders": map[string]any{"users": []string{"slack:U1"}},
		"approvals": []any{bashCall("a", "ls"), bashCall("b", "pwd")}})
	require.Equal(t, 201, r.status, string(r.raw))
	batch := r.body["batch_id"].(string)
	r = b.do("POST", base+"/"+batch+"/respond", "", map[string]any{"decision": "allow"})
	assert.Equal(t, 403, r.status)
	assert.Equal(t, "not_allowed", r.code())
	assert.Contains(t, string(r.raw), "slack:U1")
	r = b.do("POST", base+"/"+batch+"/respond", "", map[string]any{"decision": "deny", "reason": "no", "responded_by": "slack:U1"})
	require.Equal(t, 200, r.status, string(r.raw))
	assert.Len(t, ids(r.body["decided"]), 2)
	for _, q := range r.body["questions"].([]any) {
		d := q.(map[string]any)["decision"].(map[string]any)
		assert.Equal(t, "deny", d["behavior"])
		assert.Equal(t, "no", d["message"], fmt.Sprint(d))
	}
}
