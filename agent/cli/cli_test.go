package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type result struct {
	code           int
	handled        bool
	stdout, stderr string
}

func envFor(api *fakeapi.Server) func(string) string {
	return func(k string) string {
		switch k {
		case "BRIDGE_URL":
			return api.URL
		case "BRIDGE_TOKEN":
			return api.Token
		case "BRIDGE_PROJECT":
			return "ops"
		}
		return ""
	}
}

func runCLI(ctx context.Context, api *fakeapi.Server, tty bool, args ...string) result {
	var out, errb syncBuffer
	a := newApp(ReadEnv(envFor(api)), strings.NewReader(""), &out, &errb)
	a.isTTY, a.tick = func(io.Writer) bool { return tty }, 20*time.Millisecond
	code, handled := a.run(ctx, args)
	a.flush()
	return result{code, handled, out.String(), errb.String()}
}

// runAsync starts a command and returns a channel with its result.
func runAsync(ctx context.Context, api *fakeapi.Server, tty bool, args ...string) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- runCLI(ctx, api, tty, args...) }()
	return ch
}

func get(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("command did not finish")
	}
	return result{}
}

func TestRunDispatch(t *testing.T) {
	api := fakeapi.New(t, "")
	r := runCLI(t.Context(), api, false, "serve")
	assert.False(t, r.handled, "serve belongs to the lead's main")
	r = runCLI(t.Context(), api, false)
	assert.False(t, r.handled)
	r = runCLI(t.Context(), api, false, "questions")
	assert.True(t, r.handled)
	assert.Equal(t, ExitUsage, r.code)
}

func TestReadEnvDefaults(t *testing.T) {
	e := ReadEnv(func(string) string { return "" })
	assert.Equal(t, "http://127.0.0.1:8080", e.URL)
	assert.Equal(t, "default", e.Project)
}

func TestAskAnswered(t *testing.T) {
	api := fakeapi.New(t, "tok")
	ch := runAsync(t.Context(), api, false, "ask", "-q", "Deploy to production?", "-o", "Yes|Ship it now",
		"-o", "No", "--header", "Deploy", "--run", "run-7", "--agent", "deployer", "--timeout", "30m",
		"--target", "slack:C0123:1700000000.000100")
	q := api.WaitPending(t, 1)
	assert.Equal(t, "run-7", q.RunID)
	assert.Equal(t, "deployer", q.AgentID)
	assert.Equal(t, "Deploy", q.Questions[0].Header)
	assert.Equal(t, "Ship it now", q.Questions[0].Options[0].Description)
	assert.Equal(t, []domain.Target{{Platform: "slack", Channel: "C0123", ThreadTS: "1700000000.000100"}}, q.Targets)
	assert.WithinDuration(t, time.Now().Add(30*time.Minute), q.ExpiresAt, 5*time.Second)
	api.Answer(t, q.ID, []string{"Yes"})
	r := get(t, ch)
	assert.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "Yes\n", r.stdout)
	assert.Contains(t, r.stderr, "this run will pause")
}

func TestAskJSONMultiAndPositional(t *testing.T) {
	api := fakeapi.New(t, "")
	ch := runAsync(t.Context(), api, false, "ask", "--json", "--multi", "-o", "lint", "-o", "test", "-o", "e2e", "Which", "checks?")
	q := api.WaitPending(t, 1)
	assert.Equal(t, "Which checks?", q.Questions[0].Question)
	assert.True(t, q.Questions[0].MultiSelect)
	assert.Equal(t, "cli", q.AgentID)
	api.Answer(t, q.ID, []string{"lint", "e2e"})
	r := get(t, ch)
	require.Equal(t, ExitOK, r.code, r.stderr)
	var rec domain.Question
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rec), r.stdout)
	assert.Equal(t, domain.StatusAnswered, rec.Status)
	assert.Equal(t, []string{"lint", "e2e"}, rec.Selections["Which checks?"])
	assert.Equal(t, "lint, e2e", rec.Answers["Which checks?"])
}

func TestAskExpiredAndCancelledExitCodes(t *testing.T) {
	api := fakeapi.New(t, "")
	ch := runAsync(t.Context(), api, false, "ask", "-q", "Still there?")
	q := api.WaitPending(t, 1)
	api.Expire(q.ID)
	r := get(t, ch)
	assert.Equal(t, ExitExpired, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "expired")

	ch = runAsync(t.Context(), api, false, "ask", "-q", "Another?", "--json")
	q = api.WaitPending(t, 2)
	_, err := client.New(api.URL, "", "ops").Cancel(t.Context(), q.ID, domain.CancelUser)
	require.NoError(t, err)
	r = get(t, ch)
	assert.Equal(t, ExitCancelled, r.code)
	assert.Contains(t, r.stdout, `"cancel_reason": "user"`, "--json prints the final record whatever the outcome")
}

func TestAskInterruptedWithdrawsQuestion(t *testing.T) {
	api := fakeapi.New(t, "")
	ctx, cancel := context.WithCancel(t.Context())
	ch := runAsync(ctx, api, false, "ask", "-q", "Proceed?", "-o", "Yes", "-o", "No")
	q := api.WaitPending(t, 1)
	cancel()
	r := get(t, ch)
	assert.Equal(t, ExitCancelled, r.code)
	assert.Contains(t, r.stderr, "withdrawn")
	final := api.Question(q.ID)
	assert.Equal(t, domain.StatusCancelled, final.Status)
	assert.Equal(t, domain.CancelAgent, final.CancelReason, "interrupting ask cancels its question with reason agent")
}

func TestAskShowsTimeOnTerminal(t *testing.T) {
	api := fakeapi.New(t, "")
	ch := runAsync(t.Context(), api, true, "ask", "-q", "Proceed?", "--timeout", "90m")
	q := api.WaitPending(t, 1)
	time.Sleep(100 * time.Millisecond)
	api.Answer(t, q.ID, []string{"sure"})
	r := get(t, ch)
	assert.Equal(t, ExitOK, r.code)
	assert.Equal(t, "sure\n", r.stdout)
	assert.Contains(t, r.stderr, "waiting for an answer in the web inbox — 0:00 elapsed, expires in 1:30:00")
	assert.True(t, strings.HasSuffix(r.stderr, "\r\033[K"), "the status line is cleared at the end: %q", r.stderr)

	// Not a terminal: no status line.
	ch = runAsync(t.Context(), api, false, "ask", "-q", "Again?")
	q = api.WaitPending(t, 2)
	api.Answer(t, q.ID, []string{"ok"})
	r = get(t, ch)
	assert.NotContains(t, r.stderr, "elapsed")
}

func TestAskUsageAndErrors(t *testing.T) {
	api := fakeapi.New(t, "tok")
	for _, args := range [][]string{
		{"ask"},
		{"ask", "-o", "a", "-o", "b"},
		{"ask", "-q", "x?", "--target", "slack"},
		{"ask", "-q", "x?", "--timeout", "soon"},
		{"ask", "-q", "x?", "--nope"},
		{"ask", "-q", "x?", "extra"},
	} {
		r := runCLI(t.Context(), api, false, args...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
	}
	assert.Empty(t, api.Requests(), "usage errors never reach the bridge")

	r := runCLI(t.Context(), api, false, "ask", "-q", "x?", "--header", "far too long header", "-o", "one")
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "invalid")
	assert.Contains(t, r.stderr, "questions[0].header: at most 12 characters")
	assert.Contains(t, r.stderr, "questions[0].options:")

	var badErr bytes.Buffer
	bad := newApp(Env{URL: api.URL, Token: "wrong-secret-token", Project: "ops"}, nil, io.Discard, &badErr)
	bad.isTTY = func(io.Writer) bool { return false }
	code, _ := bad.run(t.Context(), []string{"ask", "-q", "x?"})
	assert.Equal(t, ExitError, code)
	assert.Contains(t, badErr.String(), "unauthorized")
	assert.NotContains(t, badErr.String(), "wrong-secret-token")
}

func seed(t *testing.T, api *fakeapi.Server, reqs ...*domain.AskRequest) []*client.Asked {
	t.Helper()
	c := client.New(api.URL, api.Token, "ops")
	var out []*client.Asked
	for _, r := range reqs {
		a, err := c.Ask(t.Context(), r)
		require.NoError(t, err)
		out = append(out, a)
	}
	return out
}

func approvalReq(run string) *domain.AskRequest {
	return &domain.AskRequest{RunID: run, AgentID: "claude-code", Kind: domain.KindApproval,
		Questions: []domain.Item{{Question: "Allow Bash: rm -rf build?", Header: "Approval",
			Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}}}
}

func TestQuestionsListAndShow(t *testing.T) {
	api := fakeapi.New(t, "")
	asked := seed(t, api,
		&domain.AskRequest{RunID: "r1", AgentID: "deploy-bot", AgentName: "Deploy bot", Questions: []domain.Item{{
			Question: "Which region?", Header: "Region",
			Options: []domain.Option{{Label: "eu-west-1", Description: "Dublin"}, {Label: "us-east-1", Description: "Virginia", Recommended: true}}}}},
		approvalReq("r2"))

	r := runCLI(t.Context(), api, false, "questions", "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 3)
	assert.Regexp(t, `^ID\s+KIND\s+STATUS\s+EXPIRES\s+AGENT\s+QUESTION$`, lines[0])
	assert.Regexp(t, `^`+domain.ShortID(asked[0].ID)+`\s+question\s+pending\s+in 5 min\s+Deploy bot\s+Which region\?`, lines[1])
	assert.Regexp(t, `^`+domain.ShortID(asked[1].ID)+`\s+approval\s+pending\s+in 5 min\s+claude-code\s+Allow Bash: rm -rf build\?`, lines[2])

	r = runCLI(t.Context(), api, false, "questions", "show", asked[0].ID)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[Region] Which region?\n"+
		"   1) eu-west-1 — Dublin\n"+
		"   2) us-east-1 — Virginia (recommended)\n"+
		"\nto dismiss it without an answer: askbridge questions cancel "+asked[0].ID+"\n")
	r = runCLI(t.Context(), api, false, "questions", "show", asked[1].ID)
	assert.Contains(t, r.stdout, "Approval "+asked[1].ID+" (pending)")
	assert.Contains(t, r.stdout, "Allow Bash: rm -rf build?\n   1) Allow\n   2) Deny\n\n")
	assert.NotContains(t, r.stdout, "Cancel —", "no number dismisses the question")

	r = runCLI(t.Context(), api, false, "questions", "show", "nope")
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "not_found")

	r = runCLI(t.Context(), api, false, "questions", "list", "--json")
	var listed struct{ Questions []domain.Question }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	assert.Len(t, listed.Questions, 2)
}

func TestQuestionsAnswerForms(t *testing.T) {
	api := fakeapi.New(t, "")
	single := &domain.AskRequest{RunID: "a", Questions: []domain.Item{{Question: "Which region?",
		Options: []domain.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}}}}
	multi := &domain.AskRequest{RunID: "b", Questions: []domain.Item{{Question: "Which checks?", MultiSelect: true,
		Options: []domain.Option{{Label: "lint"}, {Label: "test"}, {Label: "e2e"}}}}}
	open := &domain.AskRequest{RunID: "c", Question: "Release name?"}
	two := &domain.AskRequest{RunID: "d", Questions: []domain.Item{
		{Question: "Which region?", Options: []domain.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}},
		{Question: "Which checks?", MultiSelect: true, Options: []domain.Option{{Label: "lint"}, {Label: "test"}, {Label: "e2e"}}}}}
	asked := seed(t, api, single, multi, open, two, approvalReq("e"), approvalReq("f"), approvalReq("g"))

	cases := []struct {
		args    []string
		answers map[string]string
	}{
		{[]string{asked[0].ID, "2"}, map[string]string{"Which region?": "us-east-1"}},
		{[]string{asked[1].ID, "1,3"}, map[string]string{"Which checks?": "lint, e2e"}},
		{[]string{asked[2].ID, "-m", "Aurora"}, map[string]string{"Release name?": "Aurora"}},
		{[]string{asked[3].ID, "1", "2,3"}, map[string]string{"Which region?": "eu-west-1", "Which checks?": "test, e2e"}},
		{[]string{asked[4].ID, "1"}, map[string]string{"Allow Bash: rm -rf build?": "Allow"}},
		{[]string{asked[5].ID, "2", "-m", "not on a Friday"}, map[string]string{"Allow Bash: rm -rf build?": "Deny"}},
	}
	for _, c := range cases {
		r := runCLI(t.Context(), api, false, append([]string{"questions", "answer"}, c.args...)...)
		require.Equal(t, ExitOK, r.code, "%v: %s", c.args, r.stderr)
		q := api.Question(c.args[0])
		assert.Equal(t, domain.StatusAnswered, q.Status, "%v", c.args)
		assert.Equal(t, c.answers, q.Answers, "%v", c.args)
	}

	// The number after the last option dismisses nothing: answer never
	// cancels, and says how to.
	r := runCLI(t.Context(), api, false, "questions", "answer", asked[6].ID, "3")
	assert.Equal(t, ExitUsage, r.code, r.stderr)
	assert.Contains(t, r.stderr, "askbridge questions cancel "+asked[6].ID)
	assert.Equal(t, domain.StatusPending, api.Question(asked[6].ID).Status)

	// Already answered: the bridge's 409 comes through.
	r = runCLI(t.Context(), api, false, "questions", "answer", asked[0].ID, "1")
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "already_answered")
}

func TestQuestionsAnswerUsage(t *testing.T) {
	api := fakeapi.New(t, "")
	asked := seed(t, api,
		&domain.AskRequest{RunID: "a", Questions: []domain.Item{{Question: "Which region?",
			Options: []domain.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}}}},
		approvalReq("b"),
		&domain.AskRequest{RunID: "c", Questions: []domain.Item{
			{Question: "One?", Options: []domain.Option{{Label: "x"}, {Label: "y"}}}, {Question: "Two?"}}})
	for _, args := range [][]string{
		{asked[0].ID},                   // nothing chosen
		{asked[0].ID, "3"},              // out of range: no number dismisses
		{asked[0].ID, "0"},              // out of range
		{asked[0].ID, "1,2"},            // single-select
		{asked[0].ID, "eu"},             // free text without -m
		{asked[0].ID, "1", "-m", "hmm"}, // one answer on a single-select question
		{asked[0].ID, "1,3"},            // no option 3
		{asked[1].ID, "1", "-m", "ok"},  // a note goes with Deny
		{asked[2].ID, "1"},              // one argument per item
		{asked[2].ID, "1", "x", "-m", "y"},
		{asked[2].ID, "--text", "3=x", "1", "y"}, // no item 3
		{asked[2].ID, "--text", "one=x", "y"},    // ITEM is a number
		{asked[2].ID, "--text", "2=x", "1", "y"}, // item 2 given twice
	} {
		r := runCLI(t.Context(), api, false, append([]string{"questions", "answer"}, args...)...)
		assert.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
	}
	for _, q := range api.Questions() {
		assert.Equal(t, domain.StatusPending, q.Status)
	}
	r := runCLI(t.Context(), api, false, "questions", "answer", asked[2].ID, "2", "free words")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, map[string]string{"One?": "y", "Two?": "free words"}, api.Question(asked[2].ID).Answers)
}

func TestQuestionsCancel(t *testing.T) {
	api := fakeapi.New(t, "")
	asked := seed(t, api, approvalReq("a"), approvalReq("b"))
	r := runCLI(t.Context(), api, false, "questions", "cancel", asked[0].ID)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.CancelUser, api.Question(asked[0].ID).CancelReason)
	r = runCLI(t.Context(), api, false, "questions", "cancel", "--reason", "agent", asked[1].ID)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.CancelAgent, api.Question(asked[1].ID).CancelReason)
	r = runCLI(t.Context(), api, false, "questions", "cancel", asked[1].ID)
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "question_cancelled")
	r = runCLI(t.Context(), api, false, "questions", "cancel", "--reason", "bored", asked[1].ID)
	assert.Equal(t, ExitUsage, r.code)
}

// Any unique prefix of an id names its question, as in git; an ambiguous
// one lists the candidates, and a too short one is refused.
func TestQuestionIDPrefixes(t *testing.T) {
	api := fakeapi.New(t, "")
	ids := []string{"3f2a9c1b-0000-8000-aa00-000000000001", "3f2a9c77-0000-8000-aa00-000000000002", "77aa0000-0000-8000-aa00-000000000003"}
	next := 0
	api.NewID = func() string { next++; return ids[next-1] }
	seed(t, api, approvalReq("a"), approvalReq("b"), approvalReq("c"))

	r := runCLI(t.Context(), api, false, "questions", "list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `(?m)^3f2a9c1b\s+approval`, r.stdout)
	assert.Regexp(t, `(?m)^3f2a9c77\s+approval`, r.stdout)

	r = runCLI(t.Context(), api, false, "questions", "show", "3F2A9C1")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, ids[0])

	r = runCLI(t.Context(), api, false, "questions", "answer", "3f2a", "1")
	assert.Equal(t, ExitUsage, r.code)
	assert.Contains(t, r.stderr, `"3f2a" matches 2 questions`)
	assert.Contains(t, r.stderr, ids[0])
	assert.Contains(t, r.stderr, ids[1])
	assert.Equal(t, domain.StatusPending, api.Question(ids[0]).Status)

	r = runCLI(t.Context(), api, false, "questions", "answer", "3f2a9c7", "1")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.StatusAnswered, api.Question(ids[1]).Status)

	r = runCLI(t.Context(), api, false, "questions", "cancel", "77a")
	assert.Equal(t, ExitUsage, r.code, "3 characters are too few")
	assert.Contains(t, r.stderr, "at least 4")
	r = runCLI(t.Context(), api, false, "questions", "cancel", "77aa-00")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.StatusCancelled, api.Question(ids[2]).Status)

	r = runCLI(t.Context(), api, false, "questions", "show", "abcdef")
	assert.Equal(t, ExitError, r.code)
	assert.Contains(t, r.stderr, "not_found")
}

// TestTransportErrorsNameTheNextStep: a bridge that is not running and a
// BRIDGE_URL without a scheme are reported with the variable and the fix,
// not as "connection refused" or "unsupported protocol scheme".
func TestTransportErrorsNameTheNextStep(t *testing.T) {
	run := func(url string, args ...string) result {
		var out, errb syncBuffer
		a := newApp(ReadEnv(func(k string) string {
			if k == "BRIDGE_URL" {
				return url
			}
			return ""
		}), strings.NewReader(""), &out, &errb)
		code, _ := a.run(t.Context(), args)
		a.flush()
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	r := run(closed, "questions", "list")
	assert.Equal(t, ExitError, r.code)
	assert.Equal(t, "askbridge questions list: no bridge at "+closed+" (BRIDGE_URL): start it with `askbridge serve`, or set BRIDGE_URL\n", r.stderr)

	r = run("localhost:8080", "ask", "-q", "x?")
	assert.Equal(t, ExitUsage, r.code)
	assert.Equal(t, "askbridge ask: BRIDGE_URL must start with http:// or https://, e.g. http://localhost:8080 (it is \"localhost:8080\")\n", r.stderr)
	assert.Equal(t, ExitOK, run("localhost:8080", "questions", "--help").code, "help needs no bridge")
}

// TestAskAgentIDWithAndWithoutToken: without a token ask names itself
// "cli"; with one it sends no agent_id unless --agent or BRIDGE_AGENT_ID
// says so, and the bridge uses the token's agent.
func TestAskAgentIDWithAndWithoutToken(t *testing.T) {
	for _, c := range []struct {
		token, env, flag, want string
	}{{"", "", "", "cli"}, {"", "bot", "", "bot"}, {"", "bot", "x", "x"}, {"t", "", "", ""}, {"t", "bot", "", "bot"}, {"t", "", "x", "x"}} {
		a := &app{env: Env{Token: c.token, AgentID: c.env}}
		assert.Equal(t, c.want, a.askAgentID(c.flag), "%+v", c)
	}
}

// TestQuestionIDEmptyOrPastedWithEllipsis: an empty id (`show ""`, an
// unset "$id") is refused before any request with "no question id given"
// and what to pass; a short id pasted as the ask message and the list
// print it, with its ellipsis ("3f2a9c1b…", or "..." typed), names its
// question on every command that takes an id.
func TestQuestionIDEmptyOrPastedWithEllipsis(t *testing.T) {
	api := fakeapi.New(t, "")
	ids := []string{"3f2a9c1b-0000-8000-aa00-000000000001", "77aa0000-0000-8000-aa00-000000000002", "5e5e0000-0000-8000-aa00-000000000003", "6d6d0000-0000-8000-aa00-000000000004"}
	next := 0
	api.NewID = func() string { next++; return ids[next-1] }
	seed(t, api, approvalReq("a"), approvalReq("b"), approvalReq("c"), approvalReq("d"))

	for _, args := range [][]string{
		{"questions", "show", ""},
		{"questions", "show", " "},
		{"questions", "show", "…"},
		{"questions", "answer", "", "1"},
		{"questions", "answer", "", "--deny", "no"},
		{"questions", "cancel", ""},
		{"questions", "audit", ""},
	} {
		before := len(api.Requests())
		r := runCLI(t.Context(), api, false, args...)
		assert.Equal(t, ExitUsage, r.code, "%q: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "askbridge "+args[0]+" "+args[1]+": no question id given", "%q", args)
		assert.Contains(t, r.stderr, "askbridge questions list", "%q: says where ids come from", args)
		assert.NotContains(t, r.stderr, "endpoint", "%q", args)
		assert.Equal(t, before, len(api.Requests()), "%q: nothing is asked of the bridge", args)
	}

	r := runCLI(t.Context(), api, false, "questions", "show", "3f2a9c1b…")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, ids[0])
	// The fake has no audit trail: the request shows which question was meant.
	runCLI(t.Context(), api, false, "questions", "audit", "3f2a9c1b...")
	reqs := api.Requests()
	assert.Equal(t, "question="+ids[0], reqs[len(reqs)-1].Query, "audit asks for the trail of the question named")
	r = runCLI(t.Context(), api, false, "questions", "answer", "3f2a9c1b…", "1")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.StatusAnswered, api.Question(ids[0]).Status)
	r = runCLI(t.Context(), api, false, "questions", "answer", "77aa0000…", "2")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.StatusAnswered, api.Question(ids[1]).Status)
	r = runCLI(t.Context(), api, false, "questions", "cancel", ids[2]+"…")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.StatusCancelled, api.Question(ids[2]).Status)
	r = runCLI(t.Context(), api, false, "questions", "cancel", " 6d6d0000... ")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, domain.StatusCancelled, api.Question(ids[3]).Status)
}
