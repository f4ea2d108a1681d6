package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTranscriptFollowsAppends: lines arrive in pieces, huge lines and
// other entries are skipped, a rewritten (shorter) file is read anew.
func TestTranscriptFollowsAppends(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	write := func(s string, flag int) {
		f, err := os.OpenFile(p, flag|os.O_WRONLY|os.O_CREATE, 0o600)
		require.NoError(t, err)
		_, err = f.WriteString(s)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	use := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_A","name":"Bash","input":{"description":"d","command":"rm x"}}]}}`
	write(`{"type":"user","message":{"content":"hi"}}`+"\n"+use[:40], os.O_TRUNC)
	tr := newTranscript(p)
	require.NoError(t, tr.poll())
	input := json.RawMessage(`{"command":"rm x","description":"d"}`)
	assert.Empty(t, tr.find("Bash", input, false), "half a line is not read yet")

	write(use[40:]+"\n"+`{"type":"user","message":{"content":"`+strings.Repeat("x", maxTranscriptLine)+`"}}`+"\n", os.O_APPEND)
	require.NoError(t, tr.poll())
	assert.Equal(t, "toolu_A", tr.find("Bash", input, false), "same input, keys in another order")
	assert.Empty(t, tr.find("Bash", json.RawMessage(`{"command":"rm y"}`), false))
	assert.Equal(t, "toolu_A", tr.find("Bash", json.RawMessage(`{"command":"rm y"}`), true), "loose: the only open Bash call")

	write(`{"type":"progress","data":{"type":"hook_progress"},"parentToolUseID":"toolu_A"}`+"\n", os.O_APPEND)
	require.NoError(t, tr.poll())
	assert.False(t, tr.done["toolu_A"], "a hook's progress is not a decision")
	write(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"rejected","is_error":true}]}}`+"\n", os.O_APPEND)
	require.NoError(t, tr.poll())
	assert.True(t, tr.done["toolu_A"])
	assert.Empty(t, tr.find("Bash", input, true), "a resolved call is no candidate")

	write(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_B","name":"Bash","input":{"command":"ls"}}]}}`+"\n", os.O_TRUNC)
	require.NoError(t, tr.poll())
	assert.Equal(t, "toolu_B", tr.find("Bash", json.RawMessage(`{"command":"ls"}`), false), "compacted transcript read from its start")
}

func FuzzTranscriptLine(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_A","name":"Bash","input":{}}]}}`))
	f.Add([]byte(`{"type":"progress","parentToolUseID":"x","data":{"type":"bash_progress"}}`))
	f.Add([]byte(`{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_A"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr := newTranscript("")
		tr.line(b)
		_ = tr.find("Bash", json.RawMessage(`{}`), true)
	})
}
