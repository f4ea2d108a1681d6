package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const agentParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestHookAskCarriesTRACEPARENT: `askbridge hook claude-code` run by a
// traced agent (TRACEPARENT, TRACESTATE in its environment) sends the
// trace context on its ask, so the question joins the agent's trace.
func TestHookAskCarriesTRACEPARENT(t *testing.T) {
	api := fakeapi.New(t, "")
	getenv := func(k string) string {
		switch k {
		case "TRACEPARENT":
			return agentParent
		case "TRACESTATE":
			return "vendor=1"
		}
		return envFor(api)(k)
	}
	input := `{"session_id":"s","cwd":"/src","hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_use_id":"t1",
"tool_input":{"questions":[{"question":"Which auth method?","header":"Auth","multiSelect":false,
"options":[{"label":"OAuth 2.0","description":"a"},{"label":"API key","description":"b"}]}]}}`
	done := make(chan int, 1)
	var out, errb syncBuffer
	go func() {
		code, _ := Run(t.Context(), []string{"hook", "claude-code", "--poll", "1s"}, getenv, strings.NewReader(input), &out, &errb)
		done <- code
	}()
	q := api.WaitPending(t, 1)
	api.Answer(t, q.ID, []string{"API key"})
	require.Equal(t, ExitOK, <-done, errb.String())
	var asked bool
	for _, r := range api.Requests() {
		if r.Method == http.MethodPost && r.Path == "/api/projects/ops/agent-questions" {
			asked = true
			assert.Equal(t, agentParent, r.Traceparent)
			assert.Equal(t, "vendor=1", r.Tracestate)
		}
	}
	assert.True(t, asked)
}

// TestReadEnvTraceContext: a malformed TRACEPARENT is dropped, not sent.
func TestReadEnvTraceContext(t *testing.T) {
	e := ReadEnv(func(k string) string {
		if k == "TRACEPARENT" {
			return agentParent + "\r\nX-Evil: 1"
		}
		return ""
	})
	assert.Empty(t, e.Traceparent)
	e = ReadEnv(func(k string) string {
		if k == "TRACEPARENT" {
			return agentParent
		}
		return ""
	})
	assert.Equal(t, agentParent, e.Traceparent)
}
