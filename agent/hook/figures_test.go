package hook_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/require"
)

// TestFiguresParallelCallsToInbox measures, for 1, 3 and 10 parallel Bash
// calls of one turn, the time from starting the first hook (a real
// `askbridge hook claude-code` process) to the web inbox page showing
// every call, and the clicks a person needs to allow them all. Opt-in:
// ASKBRIDGE_FIGURES=1 (it prints a table; the closing note of issue 39
// quotes it).
func TestFiguresParallelCallsToInbox(t *testing.T) {
	if os.Getenv("ASKBRIDGE_FIGURES") != "1" {
		t.Skip("set ASKBRIDGE_FIGURES=1 to measure")
	}
	srv, c := serve(t)
	for _, event := range []string{"PreToolUse", "PermissionRequest"} {
		for _, n := range []int{1, 3, 10} {
			session := fmt.Sprintf("fig-%s-%d", event, n)
			cmds := make([]string, n)
			for i := range cmds {
				cmds[i] = fmt.Sprintf("rm -rf build%d", i+1)
			}
			calls := bashCalls(session, cmds...)
			tr := newTranscriptFile(t)
			tr.append(t, assistantMessage(t, "msg_"+session, true, calls...)...)
			input := preToolUse(t, session, tr.path, calls[0])
			if event == "PermissionRequest" {
				perm := fixture(t, "permissionrequest-bash.json")
				perm["session_id"], perm["transcript_path"], perm["tool_input"] = session, tr.path, calls[0].input
				input = perm.json(t)
			}
			start := time.Now()
			h := startHook(t, srv, input, "--approve", "Bash(rm *)")
			var shown time.Duration
			for deadline := time.Now().Add(20 * time.Second); shown == 0 && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
				res, err := http.Get(srv.URL + "/")
				require.NoError(t, err)
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				page := string(b)
				all := true
				for _, cmd := range cmds {
					all = all && strings.Contains(page, "Allow Bash: "+cmd+"?")
				}
				if all && (n == 1 || strings.Contains(page, fmt.Sprintf("Allow all %d", n))) {
					shown = time.Since(start)
				}
			}
			require.NotZero(t, shown, "%s %d: the inbox never showed every call", event, n)
			qs := runQuestions(t, c, session)
			require.Len(t, qs, n)
			clicks := 1
			if n == 1 {
				_, err := c.RespondText(t.Context(), qs[0].ID, "Allow")
				require.NoError(t, err)
			} else {
				_, err := c.DecideBatch(t.Context(), qs[0].BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow})
				require.NoError(t, err)
			}
			decided := time.Now()
			h.wait(t)
			require.Contains(t, h.output, `"allow"`)
			// The other hooks of the turn, one after another as Claude Code runs them.
			tr.append(t, toolResultLine(calls[0].id, "", false))
			for _, next := range calls[1:] {
				in := preToolUse(t, session, tr.path, next)
				if event == "PermissionRequest" {
					perm := fixture(t, "permissionrequest-bash.json")
					perm["session_id"], perm["transcript_path"], perm["tool_input"] = session, tr.path, next.input
					in = perm.json(t)
				}
				r := startHook(t, srv, in, "--approve", "Bash(rm *)").wait(t)
				require.Contains(t, r.output, `"allow"`, r.errb.String())
				tr.append(t, toolResultLine(next.id, "", false))
			}
			t.Logf("%-17s %2d calls: all in the inbox after %4d ms; clicks to allow all: %d; every hook done %4d ms after the click",
				event, n, shown.Milliseconds(), clicks, time.Since(decided).Milliseconds())
		}
	}
}
