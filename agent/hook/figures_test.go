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

// TestFiguresParallelCallsToSlack measures, for 1, 3 and 10 parallel Bash
// calls of one turn, the time from starting the first hook (a real
// `askbridge hook claude-code` process, PreToolUse or PermissionRequest)
// to the Slack message (the fake's chat.postMessage or chat.update)
// holding every call, and the clicks on that message a person needs to
// allow them all: once every call's copy names the message ("settled"),
// and when the person presses Allow all the instant the message appears
// ("at once"), pressing again while calls are left. Opt-in:
// ASKBRIDGE_FIGURES=1 (it prints a table; the closing note of issue 39
// quotes it).
func TestFiguresParallelCallsToSlack(t *testing.T) {
	if os.Getenv("ASKBRIDGE_FIGURES") != "1" {
		t.Skip("set ASKBRIDGE_FIGURES=1 to measure")
	}
	s := serveSlack(t)
	var table []string
	for _, event := range []string{"PreToolUse", "PermissionRequest"} {
		for _, n := range []int{1, 3, 10} {
			for _, atOnce := range []bool{false, true} {
				f := slackFigure(t, s, event, n, atOnce)
				when := "settled"
				if atOnce {
					when = "at once"
				}
				table = append(table, fmt.Sprintf("%-17s | %5d | %17d | %-16s | %25d | %-7s | %6d | %30d | %22d",
					event, n, f.shown.Milliseconds(), f.how, f.ready.Milliseconds(), when, f.clicks, f.back.Milliseconds(), f.rest.Milliseconds()))
			}
		}
	}
	t.Logf("\n%-17s | calls | to Slack msg (ms) | %-16s | every copy names msg (ms) | pressed | clicks | hook 1 back after click 1 (ms) | other hooks, all (ms)\n%s",
		"event", "by", strings.Join(table, "\n"))
}

type figure struct {
	shown, ready time.Duration
	back, rest   time.Duration // the first hook's return after the first click; the other hooks
	how          string
	clicks       int
}

// slackFigure runs one turn of n parallel calls: the first hook, the
// clicks on the Slack message, then the turn's other hooks.
func slackFigure(t *testing.T, s *slackBridge, event string, n int, atOnce bool) figure {
	session := fmt.Sprintf("figslack-%s-%d-%v", event, n, atOnce)
	cmds := make([]string, n)
	for i := range cmds {
		cmds[i] = fmt.Sprintf("rm -rf build%d", i+1)
	}
	calls := bashCalls(session, cmds...)
	tr := newTranscriptFile(t)
	tr.append(t, assistantMessage(t, "msg_"+session, true, calls...)...)
	hookInput := func(c call) string {
		if event == "PermissionRequest" {
			perm := fixture(t, "permissionrequest-bash.json")
			perm["session_id"], perm["transcript_path"], perm["tool_input"] = session, tr.path, c.input
			return perm.json(t)
		}
		return preToolUse(t, session, tr.path, c)
	}
	var f figure
	posts, from := len(s.fake.Calls("chat.postMessage")), len(s.fake.Calls(""))
	start := time.Now()
	h := startHook(t, s.srv, hookInput(calls[0]), "--approve", "Bash(rm *)")
	returned := make(chan time.Time, 1)
	go func() { <-h.done; returned <- time.Now() }()
	var at time.Time
	for deadline := time.Now().Add(20 * time.Second); at.IsZero() && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		at, f.how = s.shownAt(from, cmds...)
	}
	require.False(t, at.IsZero(), "%s %d: no Slack message held every call", event, n)
	f.shown = at.Sub(start)
	msgs := s.fake.Messages("C1")
	ts := msgs[len(msgs)-1].TS
	qs := runQuestions(t, s.c, session)
	require.Len(t, qs, n)
	for _, q := range qs {
		require.Equal(t, domain.StatusPending, q.Status, "the first hook has not returned")
	}
	var first time.Time
	press := func() {
		if f.clicks++; f.clicks == 1 {
			first = time.Now()
		}
		if n == 1 {
			s.press(t, ts, "|"+qs[0].ID+"|", "Allow")
			return
		}
		s.press(t, ts, "|all", "Allow all")
	}
	// settled: every call's copy names the message.
	ready := func() bool {
		for _, q := range runQuestions(t, s.c, session) {
			named := false
			for _, c := range q.Targets {
				named = named || c.MessageTS == ts
			}
			if !named {
				return false
			}
		}
		return true
	}
	if atOnce {
		press()
	}
	for deadline := time.Now().Add(20 * time.Second); !ready() && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
	}
	require.True(t, ready(), "%s %d: the calls' copies never all named the message", event, n)
	f.ready = time.Since(start)
	if !atOnce {
		press()
	}
	// As a person would: look at the message once it stopped changing,
	// and press Allow all again while it still offers it.
	for f.clicks < 20 {
		var pending int
		for last, stable := -1, 0; stable < 15; time.Sleep(20 * time.Millisecond) {
			pending = 0
			for _, q := range runQuestions(t, s.c, session) {
				if q.Status == domain.StatusPending {
					pending++
				}
			}
			if pending == last {
				stable++
			} else {
				last, stable = pending, 0
			}
		}
		if pending == 0 {
			break
		}
		press()
	}
	h.wait(t)
	require.Contains(t, h.output, `"allow"`, h.errb.String())
	f.back = (<-returned).Sub(first)
	// The other hooks of the turn, one after another as Claude Code runs them.
	tr.append(t, toolResultLine(calls[0].id, "", false))
	rest := time.Now()
	for _, next := range calls[1:] {
		r := startHook(t, s.srv, hookInput(next), "--approve", "Bash(rm *)").wait(t)
		require.Contains(t, r.output, `"allow"`, r.errb.String())
		tr.append(t, toolResultLine(next.id, "", false))
	}
	f.rest = time.Since(rest)
	require.Len(t, s.fake.Calls("chat.postMessage")[posts:], 1, "%s %d: one Slack message for the turn", event, n)
	return f
}
