package mcpserver_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimeoutGivesTheQuestionsTheirDeadline: `askbridge mcp --timeout` and
// BRIDGE_TIMEOUT set how long each question stays open (the flag wins);
// without either the bridge's default (5 minutes) applies.
func TestTimeoutGivesTheQuestionsTheirDeadline(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want time.Duration
	}{
		{"default", nil, nil, 5 * time.Minute},
		{"flag", []string{"--timeout", "45m"}, nil, 45 * time.Minute},
		{"env", nil, []string{"BRIDGE_TIMEOUT=48h"}, 48 * time.Hour},
		{"flag over env", []string{"--timeout", "2h"}, []string{"BRIDGE_TIMEOUT=48h"}, 2 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := fakeapi.New(t, "")
			cmd := exec.Command(os.Args[0], append([]string{"mcp"}, c.args...)...)
			cmd.Env = append(append(bridgetest.CleanEnv(), "ASKBRIDGE_TEST_AS_BRIDGE=1", "BRIDGE_URL="+api.URL, "BRIDGE_PROJECT=ops"), c.env...)
			s, _ := connectCmd(t, cmd)
			done := make(chan *mcp.CallToolResult, 1)
			go func() {
				r, _ := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_user", Arguments: authArgs()})
				done <- r
			}()
			q := api.WaitPending(t, 1)
			assert.Equal(t, c.want, q.ExpiresAt.Sub(q.CreatedAt))
			api.Answer(t, q.ID, []string{"OAuth 2.0"})
			select {
			case r := <-done:
				require.NotNil(t, r)
				assert.False(t, r.IsError, text(r))
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not return after the answer")
			}
		})
	}
}

// TestTimeoutOutOfBoundsIsRefusedAtStart: a deadline the bridge would refuse
// stops `askbridge mcp` at start, naming where it came from and the bounds,
// instead of failing every call.
func TestTimeoutOutOfBoundsIsRefusedAtStart(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--timeout", "5s"}, "", "askbridge mcp: --timeout: must be between 10s and 720h (30 days), got 5s\n"},
		{nil, "BRIDGE_TIMEOUT=31d", "askbridge mcp: BRIDGE_TIMEOUT: must be between 10s and 720h (30 days), got 31d\n"},
		{nil, "BRIDGE_TIMEOUT=soon", "askbridge mcp: BRIDGE_TIMEOUT: \"soon\" is not a duration such as \"30m\" or a number of seconds\n"},
	} {
		cmd := exec.Command(os.Args[0], append([]string{"mcp"}, c.args...)...)
		cmd.Env = append(bridgetest.CleanEnv(), "ASKBRIDGE_TEST_AS_BRIDGE=1", "BRIDGE_URL=http://127.0.0.1:1", c.env)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		assert.Equal(t, 2, ee.ExitCode())
		assert.Equal(t, c.want, string(out))
	}
}
