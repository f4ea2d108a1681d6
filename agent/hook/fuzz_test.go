package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
)

// FuzzHookInput runs the whole hook on arbitrary stdin against a fake
// bridge that answers every question at once: no panic; the exit code is
// 0 or 1 (never 2, which would block Claude Code's tool call); whatever is
// printed on stdout is one JSON object naming the input's hook event.
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{oneQuestion, fourQuestions,
		`{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf /tmp/x"}}`,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push --force"}}`,
		`{"session_id":"s","agent_id":"sub","hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Q?","header":"H","options":[{"label":"a"},{"label":"b"}]}]}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":{"questions":"nope"}}`,
		`{"hook_event_name":"Stop"}`, `{}`, ``, `{"hook_event_name":"PreToolUse"} trailing`,
	} {
		f.Add([]byte(s))
	}
	api := fakeapi.New(f, "")
	api.OnCreate = func(q *domain.Question) {
		choices := make([][]string, len(q.Questions))
		for i, it := range q.Questions {
			if len(it.Options) > 0 {
				choices[i] = []string{it.Options[0].Label}
			} else {
				choices[i] = []string{"free text"}
			}
		}
		a := domain.Resolve(q.Questions, choices)
		q.Status, q.Answers, q.Selections, q.Response = domain.StatusAnswered, a.Answers, a.Selections, a.Response
		q.RespondedBy = &domain.Person{Platform: "api", ID: "fuzz"}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := Run(ctx, []string{"--poll", "1s", "--timeout", "2s", "--approve", "Bash(rm *)", "--approve", "Bash(git push*)"},
			Env{URL: api.URL, Project: "fuzz"}, bytes.NewReader(input), &out, &errb)
		if code != ExitOK && code != ExitError {
			t.Fatalf("exit code %d for %q (stderr %s)", code, input, errb.String())
		}
		if s := strings.TrimSpace(out.String()); s != "" {
			var o struct {
				HookSpecificOutput struct {
					HookEventName string `json:"hookEventName"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(s), &o); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", s)
			}
			in, _ := parseInput(input)
			if in == nil || o.HookSpecificOutput.HookEventName != in.HookEventName {
				t.Fatalf("stdout names event %q for input %q", o.HookSpecificOutput.HookEventName, input)
			}
			if code != ExitOK {
				t.Fatalf("printed a decision but exited %d", code)
			}
		}
	})
}
