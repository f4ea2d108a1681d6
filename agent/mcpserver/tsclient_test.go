package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsSDK is the directory holding node_modules/@modelcontextprotocol/sdk,
// installed by scripts/deps.sh (make test). Missing: the test fails in CI
// and is skipped elsewhere.
func tsSDK(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ASKBRIDGE_NPM_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err == nil {
			dir = filepath.Join(cache, "askbridge", "npm")
		}
	}
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if nodeErr != nil || sdkErr != nil {
		msg := "node or @modelcontextprotocol/sdk missing in " + dir + ": run make deps (scripts/deps.sh)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

type tsOutput struct {
	Tools []struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Result struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type, Text string
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
	} `json:"result"`
	Elicited *struct {
		Message         string         `json:"message"`
		RequestedSchema map[string]any `json:"requestedSchema"`
	} `json:"elicited"`
	ElicitAborted bool `json:"elicitAborted"`
}

// runTS starts the TypeScript client with cfg; wait returns its output.
func runTS(t *testing.T, cfg map[string]any) (wait func() tsOutput) {
	t.Helper()
	cfg["sdk"] = tsSDK(t)
	cfg["arguments"] = authArgs()
	b, _ := json.Marshal(cfg)
	cmd := exec.Command("node", filepath.Join("testdata", "tsclient.cjs"), string(b))
	var stdout strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = &testWriter{t: t}
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return func() tsOutput {
		select {
		case err := <-done:
			require.NoError(t, err, "the TypeScript client failed")
		case <-time.After(30 * time.Second):
			t.Fatal("the TypeScript client did not finish")
		}
		var out tsOutput
		require.NoError(t, json.Unmarshal([]byte(stdout.String()), &out), stdout.String())
		return out
	}
}

func stdioConfig(api *fakeapi.Server, elicit any) map[string]any {
	env := map[string]string{}
	for _, kv := range bridgetest.CleanEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["ASKBRIDGE_TEST_AS_BRIDGE"], env["BRIDGE_URL"], env["BRIDGE_PROJECT"] = "1", api.URL, "ops"
	return map[string]any{"transport": "stdio", "command": os.Args[0], "args": []string{"mcp"}, "env": env, "elicit": elicit}
}

func TestTypeScriptClientOverStdio(t *testing.T) {
	api := fakeapi.New(t, "")
	wait := runTS(t, stdioConfig(api, nil))
	q := api.WaitPending(t, 1)
	assert.Equal(t, "ts-host", q.AgentID)
	api.Answer(t, q.ID, []string{"OAuth 2.0"})
	out := wait()
	require.Len(t, out.Tools, 1)
	assert.Equal(t, "ask_user", out.Tools[0].Name)
	assert.Contains(t, string(out.Tools[0].InputSchema), `"minItems":2`)
	// The SDK validates structuredContent against the output schema: a
	// schema it could not compile or a mismatch would have failed the call.
	assert.False(t, out.Result.IsError)
	assert.Equal(t, "answered", out.Result.StructuredContent["status"])
	require.Len(t, out.Result.Content, 2)
	assert.Equal(t, `User has answered your questions: "Which auth method?"="OAuth 2.0". You can now continue with the user's answers in mind.`, out.Result.Content[0].Text)
	assert.JSONEq(t, mustJSON(out.Result.StructuredContent), out.Result.Content[1].Text)
	assert.Nil(t, out.Elicited, "no form for a host without elicitation")
}

func TestTypeScriptClientAnswersByElicitationOverStdio(t *testing.T) {
	api := fakeapi.New(t, "")
	out := runTS(t, stdioConfig(api, map[string]any{"content": map[string]any{"q1": "API key"}}))()
	require.NotNil(t, out.Elicited)
	assert.Contains(t, out.Elicited.Message, "Which auth method?")
	assert.False(t, out.Result.IsError)
	assert.Equal(t, map[string]any{"Which auth method?": "API key"}, out.Result.StructuredContent["answers"])
	q := api.Questions()[0]
	assert.Equal(t, "mcp", q.RespondedBy.Platform)
	assert.Equal(t, "ts-host", q.RespondedBy.ID)
}

func TestTypeScriptClientOverStreamableHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	tsSDK(t)
	srv := bridgetest.Serve(t)
	c := client.New(srv.URL, "", "default")

	t.Run("answered elsewhere withdraws the form", func(t *testing.T) {
		wait := runTS(t, map[string]any{"transport": "http", "url": srv.URL + "/mcp", "elicit": "hang"})
		q := pendingOn(t, c, 1)
		time.Sleep(500 * time.Millisecond) // the form is open
		_, err := c.RespondText(t.Context(), q.ID, "OAuth 2.0")
		require.NoError(t, err)
		out := wait()
		require.NotNil(t, out.Elicited, "the host was offered the question")
		assert.True(t, out.ElicitAborted, "the form was withdrawn when the answer came from elsewhere")
		assert.Equal(t, "answered", out.Result.StructuredContent["status"])
		assert.Equal(t, map[string]any{"Which auth method?": "OAuth 2.0"}, out.Result.StructuredContent["answers"])
	})
	t.Run("the host's user answers first", func(t *testing.T) {
		out := runTS(t, map[string]any{"transport": "http", "url": srv.URL + "/mcp",
			"elicit": map[string]any{"content": map[string]any{"q1": "OAuth 2.0", "q1_other": "OIDC via Okta"}}})()
		assert.Equal(t, map[string]any{"Which auth method?": "OIDC via Okta"}, out.Result.StructuredContent["answers"])
		got, err := c.Get(t.Context(), out.Result.StructuredContent["question_id"].(string))
		require.NoError(t, err)
		assert.Equal(t, "mcp", got.RespondedBy.Platform)
	})
	t.Run("without a form the call waits parked", func(t *testing.T) {
		// No form at the host: the bridge parks the session's call (its
		// connection held without a goroutine) and writes the result
		// event when the answer comes.
		wait := runTS(t, map[string]any{"transport": "http", "url": srv.URL + "/mcp"})
		q := pendingOn(t, c, 1)
		time.Sleep(500 * time.Millisecond) // parked
		_, err := c.RespondText(t.Context(), q.ID, "API key")
		require.NoError(t, err)
		out := wait()
		assert.Equal(t, "answered", out.Result.StructuredContent["status"])
		assert.Equal(t, map[string]any{"Which auth method?": "API key"}, out.Result.StructuredContent["answers"])
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
