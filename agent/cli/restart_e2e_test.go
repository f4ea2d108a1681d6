package cli_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestE2EAskWaitsThroughARestart: the bridge restarts while `askbridge ask`
// waits; ask says it lost the bridge and is still waiting, and prints the
// answer given after the restart.
func TestE2EAskWaitsThroughARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, runs and restarts the bridge binary")
	}
	srv := bridgetest.Serve(t)
	p := start(t, srv, "ask", "Deploy?", "-o", "Yes", "-o", "No", "--timeout", "10m")
	c := client.New(srv.URL, "", "default")
	q := pendingOn(t, c, 1)
	time.Sleep(500 * time.Millisecond) // ask's long-poll is parked on the bridge
	srv.Restart(t, 2*time.Second)
	select {
	case <-p.done:
		t.Fatalf("askbridge ask ended during the restart (exit %d): %s", p.code, p.stderr)
	default:
	}
	_, err := c.RespondText(t.Context(), q.ID, "Yes")
	require.NoError(t, err)
	p.wait(t)
	assert.Equal(t, 0, p.code, p.stderr.String())
	assert.Equal(t, "Yes\n", p.stdout.String())
	assert.Contains(t, p.stderr.String(), "askbridge ask: the bridge at "+srv.URL+" stopped answering (restarting?); still waiting, for up to 2 min until it is back\n")
}
