package hook_test

// Issue 39 against the real Claude Code CLI (opt-in: make
// test-claude-code): one assistant message with three Bash calls reaches
// the bridge as one batch before the first hook returns; Allow all lets
// all three run with no further approval; a per-call mix (allow, deny
// with a note, edit) ends with each call getting its own decision.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parallelMessagesAPI plays a model that makes several Bash calls in one
// assistant message, then, once every call has its tool_result, ends its
// turn with text.
type parallelMessagesAPI struct {
	*fakeMessagesAPI
	ids     []string
	inputs  []map[string]any
	results map[string]string
	errors  map[string]bool
	sentAt  time.Time // when the assistant message with the calls was sent
}

func newParallelMessagesAPI(t *testing.T, ids []string, inputs []map[string]any) *parallelMessagesAPI {
	p := &parallelMessagesAPI{fakeMessagesAPI: &fakeMessagesAPI{tool: "Bash"}, ids: ids, inputs: inputs,
		results: map[string]string{}, errors: map[string]bool{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *parallelMessagesAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.log = append(p.log, r.Method+" "+r.URL.Path)
	p.mu.Unlock()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			_, _ = io.WriteString(w, `{"input_tokens":100}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req struct {
		Stream bool `json:"stream"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	offered := false
	for _, tl := range req.Tools {
		offered = offered || tl.Name == "Bash"
	}
	answered := 0
	p.mu.Lock()
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			for _, id := range p.ids {
				if b.Type == "tool_result" && b.ToolUseID == id {
					answered++
					c := string(b.Content)
					var text string
					if json.Unmarshal(b.Content, &text) == nil {
						c = text
					}
					p.results[id], p.errors[id] = c, b.IsError
				}
			}
		}
	}
	p.mu.Unlock()
	switch {
	case !offered:
		p.reply(w, req.Stream, textBlock("Clean up"), "end_turn")
	case answered == 0:
		var blocks []map[string]any
		for i, id := range p.ids {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": p.inputs[i]})
		}
		p.replyBlocks(w, req.Stream, blocks, "tool_use")
		p.mu.Lock()
		if p.sentAt.IsZero() {
			p.sentAt = time.Now()
		}
		p.mu.Unlock()
	default:
		p.reply(w, req.Stream, textBlock("Thanks, noted."), "end_turn")
	}
}

// replyBlocks answers with several content blocks in one message.
func (p *parallelMessagesAPI) replyBlocks(w http.ResponseWriter, stream bool, blocks []map[string]any, stop string) {
	msg := map[string]any{"id": "msg_fake_parallel", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}
	if !stream {
		content := make([]any, len(blocks))
		for i, b := range blocks {
			content[i] = b
		}
		msg["content"], msg["stop_reason"] = content, stop
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	msg["content"] = []any{}
	send("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range blocks {
		in, _ := json.Marshal(b["input"])
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func (p *parallelMessagesAPI) result(id string) (string, bool, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.results[id]
	return r, p.errors[id], ok
}

const batchHooks = `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"BRIDGE --poll 1s --timeout 2m --approve 'Bash(rm *)'","timeout":180}]}],
 "PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"BRIDGE","timeout":30}]}]}`

// TestRealClaudeCodeParallelCallsOneBatch: the model makes three Bash
// calls in one message. All three approvals reach the bridge as one batch
// while the first hook still waits; then either Allow all (every call runs,
// nothing more is asked) or a per-call mix (allow, deny with a note, edit).
func TestRealClaudeCodeParallelCallsOneBatch(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" {
		t.Skip(envClaudeCode + " is not set: run make test-claude-code")
	}
	srv, c := serve(t)
	for _, mix := range []bool{false, true} {
		t.Run(fmt.Sprintf("mix=%v", mix), func(t *testing.T) {
			ids := []string{fmt.Sprintf("toolu_par%v_1", mix), fmt.Sprintf("toolu_par%v_2", mix), fmt.Sprintf("toolu_par%v_3", mix)}
			var inputs []map[string]any
			for i := range ids {
				inputs = append(inputs, map[string]any{"command": fmt.Sprintf("rm -rf build%d && echo removed build%d", i+1, i+1),
					"description": fmt.Sprintf("Remove build%d", i+1)})
			}
			api := newParallelMessagesAPI(t, ids, inputs)
			start := time.Now()
			run := startClaude(t, bin, srv, api.fakeMessagesAPI, batchHooks, false)
			for i := range ids {
				require.NoError(t, os.MkdirAll(filepath.Join(run.work, fmt.Sprintf("build%d", i+1), "tmp"), 0o755))
			}
			first := pendingWithin(t, c, run, 2*time.Minute)
			var qs []*domain.Question
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				var err error
				qs, err = c.RunQuestions(t.Context(), first.RunID)
				require.NoError(t, err)
				if len(qs) >= 3 {
					break
				}
			}
			require.Len(t, qs, 3, "the three calls are asked before any is decided")
			t.Logf("three approvals asked within %s of each other, %s after Claude Code started", qs[2].CreatedAt.Sub(qs[0].CreatedAt),
				qs[0].CreatedAt.Sub(start).Round(time.Millisecond))
			for i, q := range qs {
				assert.Equal(t, ids[i], q.Action.CallID)
				assert.Equal(t, qs[0].BatchID, q.BatchID)
				assert.Equal(t, domain.StatusPending, q.Status, "no hook has returned yet")
			}
			if !mix {
				_, err := c.DecideBatch(t.Context(), qs[0].BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow})
				require.NoError(t, err)
			} else {
				_, err := c.RespondText(t.Context(), qs[0].ID, "Allow")
				require.NoError(t, err)
				reason := "keep build2: it holds the release"
				_, err = c.Respond(t.Context(), qs[1].ID, domain.RespondRequest{Reason: &reason})
				require.NoError(t, err)
				_, err = c.Respond(t.Context(), qs[2].ID, domain.RespondRequest{EditedInput: json.RawMessage(`{"command":"rm -rf build3/tmp && echo trimmed build3"}`)})
				require.NoError(t, err)
			}
			run.finish(t)
			after, err := c.RunQuestions(t.Context(), first.RunID)
			require.NoError(t, err)
			assert.Len(t, after, 3, "no further approval was asked")
			assertThreeBuildResults(t, api, run, ids, mix)
		})
	}
}

// assertThreeBuildResults checks the tool_results of the three parallel
// `rm -rf buildN` calls: all removed after Allow all, or (mix) call 1
// allowed, call 2 denied with its note and kept, call 3 run as edited.
func assertThreeBuildResults(t *testing.T, api *parallelMessagesAPI, run *claudeRun, ids []string, mix bool) {
	t.Helper()
	for i, id := range ids {
		res, isErr, ok := api.result(id)
		require.True(t, ok, "call %d: no tool_result; api %v\nstdout %s", i+1, api.requests(), tail(run.stdout.String()))
		t.Logf("call %d: error=%v %q", i+1, isErr, res)
		_, statErr := os.Stat(filepath.Join(run.work, fmt.Sprintf("build%d", i+1)))
		switch {
		case !mix || i == 0:
			assert.False(t, isErr)
			assert.Contains(t, res, fmt.Sprintf("removed build%d", i+1))
			assert.True(t, os.IsNotExist(statErr), "build%d removed", i+1)
		case i == 1:
			assert.True(t, isErr)
			assert.Contains(t, res, "keep build2: it holds the release")
			assert.NoError(t, statErr, "build2 kept")
		default:
			assert.False(t, isErr)
			assert.Contains(t, res, "trimmed build3")
			assert.NoError(t, statErr, "build3 kept, only its tmp removed")
		}
	}
}
