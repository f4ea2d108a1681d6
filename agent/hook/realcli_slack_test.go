package hook_test

// Issue 39's "done when", on Slack, against the real Claude Code CLI
// (opt-in: make test-claude-code): one assistant message with three Bash
// calls is one Slack message before the first hook returns; its "Allow all
// 3" lets all three run with no further message; a per-call mix (Allow,
// Deny with note…, Edit…) pressed on the message gives each call its own
// decision.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRealClaudeCodeParallelCallsOneSlackMessage(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" {
		t.Skip(envClaudeCode + " is not set: run make test-claude-code")
	}
	s := serveSlack(t)
	for _, mix := range []bool{false, true} {
		t.Run(fmt.Sprintf("mix=%v", mix), func(t *testing.T) {
			ids := []string{fmt.Sprintf("toolu_slk%v_1", mix), fmt.Sprintf("toolu_slk%v_2", mix), fmt.Sprintf("toolu_slk%v_3", mix)}
			var inputs []map[string]any
			var cmds []string
			for i := range ids {
				cmds = append(cmds, fmt.Sprintf("rm -rf build%d", i+1))
				inputs = append(inputs, map[string]any{"command": cmds[i] + fmt.Sprintf(" && echo removed build%d", i+1),
					"description": fmt.Sprintf("Remove build%d", i+1)})
			}
			posts, msgs, calls := len(s.fake.Calls("chat.postMessage")), len(s.fake.Messages("C1")), len(s.fake.Calls(""))
			api := newParallelMessagesAPI(t, ids, inputs)
			run := startClaude(t, bin, s.srv, api.fakeMessagesAPI, batchHooks, false)
			for i := range ids {
				require.NoError(t, os.MkdirAll(filepath.Join(run.work, fmt.Sprintf("build%d", i+1), "tmp"), 0o755))
			}

			// One Slack message holding the three calls, while every hook waits.
			var ts string
			for deadline := time.Now().Add(2 * time.Minute); ts == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if m, ok := s.holding(msgs, cmds...); ok {
					ts = m.TS
				}
				select {
				case err := <-run.done:
					t.Fatalf("claude exited before the message was posted: %v\nstdout %s", err, tail(run.stdout.String()))
				default:
				}
			}
			require.NotEmpty(t, ts, "no Slack message held the three calls; messages %v\napi %v", s.fake.Messages("C1"), api.requests())
			shown, how := s.shownAt(calls, cmds...)
			first := pendingWithin(t, s.c, run, 10*time.Second)
			qs, err := s.c.RunQuestions(t.Context(), first.RunID)
			require.NoError(t, err)
			require.Len(t, qs, 3)
			for i, q := range qs {
				assert.Equal(t, ids[i], q.Action.CallID)
				assert.Equal(t, qs[0].BatchID, q.BatchID)
				assert.Equal(t, domain.StatusPending, q.Status, "no hook has returned: call %d is still pending", i+1)
				_, _, got := api.result(ids[i])
				assert.False(t, got, "no tool_result yet")
			}
			assert.Len(t, s.fake.Calls("chat.postMessage")[posts:], 1, "one Slack message for the three calls")
			t.Logf("the Slack message held the three calls (%s) %d ms after the first approval was asked",
				how, shown.Sub(qs[0].CreatedAt).Milliseconds())

			clicks := 0
			if !mix {
				s.press(t, ts, "|all", "Allow all 3")
				clicks++
			} else {
				s.press(t, ts, "|"+qs[0].ID+"|0", "Allow")
				clicks++
				waitStatus(t, s, qs[0].ID)
				views := len(s.fake.Views())
				s.press(t, ts, "|"+qs[1].ID+"|0", "Deny with note")
				s.submit(t, views, "keep build2: it holds the release")
				clicks += 2
				waitStatus(t, s, qs[1].ID)
				views = len(s.fake.Views())
				s.press(t, ts, "|"+qs[2].ID+"|0", "Edit")
				s.submit(t, views, "rm -rf build3/tmp && echo trimmed build3")
				clicks += 2
			}
			run.finish(t)

			after, err := s.c.RunQuestions(t.Context(), first.RunID)
			require.NoError(t, err)
			assert.Len(t, after, 3, "no further approval was asked")
			assert.Len(t, s.fake.Messages("C1")[msgs:], 1, "no further Slack message")
			assert.Len(t, s.fake.Calls("chat.postMessage")[posts:], 1, "no further Slack message")
			assertThreeBuildResults(t, api, run, ids, mix)
			// The message is settled: no button left, each call's outcome.
			var final string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				m, _ := s.fake.Message("C1", ts)
				final = m.Texts()
				if !strings.Contains(string(m.Blocks), `"action_id"`) {
					break
				}
			}
			m, _ := s.fake.Message("C1", ts)
			assert.NotContains(t, string(m.Blocks), `"action_id"`, "the settled message keeps no button")
			t.Logf("clicks: %d; the settled message (%d edits):\n%s", clicks, m.Edits, final)
			assert.Contains(t, final, "3 of 3 decided")
			if !mix {
				assert.Equal(t, 3, strings.Count(final, "Allowed as asked by <@U1>"), "each call's outcome")
			} else {
				assert.Equal(t, 1, strings.Count(final, "Allowed as asked by <@U1>"), "call 1's outcome")
				assert.Contains(t, final, "Denied with a note by <@U1>: keep build2: it holds the release")
				assert.Contains(t, final, "Allowed with edits by <@U1>: command: ")
				assert.Contains(t, final, "trimmed build3")
			}
		})
	}
}

// waitStatus waits until question id is decided.
func waitStatus(t *testing.T, s *slackBridge, id string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		q, err := s.c.Get(t.Context(), id)
		require.NoError(t, err)
		if q.Status.Final() {
			return
		}
	}
	t.Fatalf("question %s was not decided after the click", id)
}

// TestFiguresRealClaudeCodeToSlack measures, with the real CLI, for 1, 3
// and 10 Bash calls in one assistant message: the time from the fake
// model sending that message to the Slack message holding every call
// (Claude Code starting its first hook included), the clicks on it to
// allow them all, and the time from the click to Claude Code's end of
// turn. Opt-in: ASKBRIDGE_FIGURES=1 and the real CLI (make
// test-claude-code).
func TestFiguresRealClaudeCodeToSlack(t *testing.T) {
	bin := os.Getenv(envClaudeCode)
	if bin == "" || os.Getenv("ASKBRIDGE_FIGURES") != "1" {
		t.Skip("set ASKBRIDGE_FIGURES=1 and " + envClaudeCode + " to measure")
	}
	s := serveSlack(t)
	var table []string
	for _, n := range []int{1, 3, 10} {
		var ids, cmds []string
		var inputs []map[string]any
		for i := range n {
			ids = append(ids, fmt.Sprintf("toolu_fig%d_%d", n, i+1))
			cmds = append(cmds, fmt.Sprintf("rm -rf build%d", i+1))
			inputs = append(inputs, map[string]any{"command": cmds[i], "description": fmt.Sprintf("Remove build%d", i+1)})
		}
		posts, msgs, calls := len(s.fake.Calls("chat.postMessage")), len(s.fake.Messages("C1")), len(s.fake.Calls(""))
		api := newParallelMessagesAPI(t, ids, inputs)
		run := startClaude(t, bin, s.srv, api.fakeMessagesAPI, batchHooks, false)
		var ts string
		for deadline := time.Now().Add(2 * time.Minute); ts == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if m, ok := s.holding(msgs, cmds...); ok {
				ts = m.TS
			}
		}
		require.NotEmpty(t, ts, "%d calls: no Slack message held every call", n)
		at, how := s.shownAt(calls, cmds...)
		api.mu.Lock()
		sent := api.sentAt
		api.mu.Unlock()
		// A person reads the message for a moment before clicking.
		time.Sleep(time.Second)
		qs, err := s.c.RunQuestions(t.Context(), pendingWithin(t, s.c, run, 10*time.Second).RunID)
		require.NoError(t, err)
		require.Len(t, qs, n)
		if n == 1 {
			s.press(t, ts, "|"+qs[0].ID+"|", "Allow")
		} else {
			s.press(t, ts, "|all", fmt.Sprintf("Allow all %d", n))
		}
		clicked := time.Now()
		run.finish(t)
		for i, id := range ids {
			res, isErr, ok := api.result(id)
			require.True(t, ok, "%d calls: call %d has no tool_result", n, i+1)
			require.False(t, isErr, "%d calls: call %d: %s", n, i+1, res)
		}
		require.Len(t, s.fake.Calls("chat.postMessage")[posts:], 1, "%d calls: one Slack message", n)
		table = append(table, fmt.Sprintf("%5d | %29d | %-16s | %6d | %30d", n, at.Sub(sent).Milliseconds(), how, 1, time.Since(clicked).Milliseconds()))
	}
	t.Logf("\ncalls | model message → Slack msg (ms) | by               | clicks | click → Claude Code done (ms)\n%s", strings.Join(table, "\n"))
}
