package channeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// The batch suite: the approvals of one batch (parallel tool calls of one
// run, domain/batch.go) are one message on every chat surface that shows
// them (lifecycle.BatchChannel), the same rules everywhere:
//   - a batch of three calls is one message, with each call's exact
//     command; a fourth call joining the open batch re-renders that
//     message instead of posting another;
//   - each call has its own Allow and Deny; "Allow all" decides every
//     still-pending call, a call decided already keeps its decision;
//   - who may answer is checked per call: a person allowed for one call and
//     not another decides the first, the other stays pending, and they are
//     told privately;
//   - "Deny all" with a note denies every call with the note as its reason,
//     never as an answer;
//   - every copy shows each call's outcome (a withdrawn call says so), and
//     the message is finished once every call is;
//   - past the platform's limits (30 calls) the message says so and links
//     the batch's page of the web inbox; no call is dropped.

// BatchDriver acts as the suite's people on a surface that shows a batch
// as one message. Every action returns once the surface has handled it.
type BatchDriver interface {
	// Person is who name is on the surface.
	Person(name string) domain.Person
	// Messages is how many messages the surface holds where the suite
	// asks (the env's targets).
	Messages() int
	// Copy is the text of q's copy as a person reads it now (the batch's
	// message); Live reports whether it still shows controls.
	Copy(q *domain.Question) string
	Live(q *domain.Question) bool
	// Told is everything name was told privately so far, oldest first.
	Told(name string) []string
	// ClickCall presses the button labelled label ("Allow", "Deny") in
	// q's own section of its batch's message, as the message is now.
	ClickCall(name string, q *domain.Question, label string)
	// DenyCallWithNote denies q through its own "Deny with note…" in its
	// section of the batch's message, typing note exactly.
	DenyCallWithNote(name string, q *domain.Question, note string)
	// All presses "Allow all" (decision domain.DecideAllow) or "Deny all"
	// (domain.DecideDeny) on the message of q's batch; a note, when not
	// empty, goes with Deny all through the surface's "Deny all with
	// note…".
	All(name string, q *domain.Question, decision, note string)
}

// BatchEnv is one surface under the batch suite.
type BatchEnv struct {
	// Router has the surface added and uses the suite's RouterConfig.
	Router *lifecycle.Router
	// Targets are where the suite asks, in project "ops".
	Targets []domain.Target
	Driver  BatchDriver
	// PublicURL is the bridge's public_url the surface was given: the
	// batch's page of the web inbox is linked there.
	PublicURL string
	// Mails: the surface sends mails, which cannot change once sent
	// (email). A batch asked in one request is still one mail; a call
	// that joins later brings a new mail listing every call, calls asked
	// one by one may come in several, and each call's outcome is in the
	// last mail. Messages counts the batch's mails, Copy reads them all and
	// Live the newest.
	Mails bool
}

// BatchFactory builds a BatchEnv on the suite's RouterConfig (Clock,
// Logger and PauseWait set; the factory adds its Store).
type BatchFactory func(t *testing.T, rc lifecycle.RouterConfig) *BatchEnv

// RunBatch runs every batch case against surfaces newEnv builds, one env
// per case.
func RunBatch(t *testing.T, newEnv BatchFactory) {
	t.Run("OneMessage", func(t *testing.T) { batchOneMessage(t, newEnv) })
	t.Run("ConcurrentAsks", func(t *testing.T) { batchConcurrent(t, newEnv) })
	t.Run("JoinRerenders", func(t *testing.T) { batchJoin(t, newEnv) })
	t.Run("AllowAllKeepsDecided", func(t *testing.T) { batchAllowAllKeeps(t, newEnv) })
	t.Run("ResponderPerCall", func(t *testing.T) { batchResponders(t, newEnv) })
	t.Run("DenyAllWithNote", func(t *testing.T) { batchDenyAllNote(t, newEnv) })
	t.Run("DenyOneWithNote", func(t *testing.T) { batchDenyOneNote(t, newEnv) })
	t.Run("WithdrawnCall", func(t *testing.T) { batchWithdrawn(t, newEnv) })
	t.Run("OverLimit", func(t *testing.T) { batchOverLimit(t, newEnv) })
}

type bs struct {
	t   *testing.T
	env *BatchEnv
	d   BatchDriver
}

func startBatch(t *testing.T, newEnv BatchFactory) *bs {
	t.Helper()
	clock := &Clock{now: time.Now().UTC()}
	logs := &logBuffer{}
	rc := lifecycle.RouterConfig{Clock: clock, Logger: logs.logger(), PauseWait: SuitePauseWait,
		CopyRetryBackoff: 5 * time.Millisecond, CopyRetryFor: time.Second,
		HasWebhookSecret: func(string) bool { return true }}
	env := newEnv(t, rc)
	return &bs{t: t, env: env, d: env.Driver}
}

// command is the command of call i of a suite batch.
func command(i int) string { return fmt.Sprintf("rm -rf build%d", i) }

// call asks the approval of call i (its command, command(i)) in run-1,
// with responders when any are named.
func (s *bs) call(i int, responders ...string) *domain.Question {
	s.t.Helper()
	q, err := s.ask(i, responders...)
	if err != nil {
		s.t.Fatal(err)
	}
	return q
}

// ask asks call i as call does, and returns what went wrong instead of
// failing the test (it runs on other goroutines).
func (s *bs) ask(i int, responders ...string) (*domain.Question, error) {
	in, _ := json.Marshal(map[string]string{"command": command(i)})
	req := domain.AskRequest{Kind: domain.KindApproval, Question: "Run " + command(i) + "?", Header: "Bash",
		Options: NoteApproval(true).Options, AgentID: "deploy-bot", AgentName: "Deploy bot", RunID: "run-1",
		Action: &domain.Action{Tool: "Bash", Input: in, CallID: fmt.Sprintf("toolu_%02d", i)}, Targets: s.env.Targets}
	if len(responders) > 0 {
		req.Responders = &domain.Responders{}
	}
	for _, name := range responders {
		p := s.d.Person(name)
		req.Responders.Users = append(req.Responders.Users, p.Platform+":"+p.ID)
	}
	res, err := s.env.Router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		return nil, fmt.Errorf("asking call %d: %w", i, err)
	}
	for _, tg := range res.Question.Targets {
		if tg.Error != "" || tg.MessageTS == "" {
			return nil, fmt.Errorf("posting call %d to %s failed: %q", i, tg.Channel, tg.Error)
		}
	}
	return res.Question, nil
}

// batch asks calls 1…n as one batch, in one request (AskBatch: how a
// host that knows its turn's calls asks them).
func (s *bs) batch(n int) []*domain.Question {
	s.t.Helper()
	req := domain.BatchRequest{RunID: "run-1", AgentID: "deploy-bot", AgentName: "Deploy bot", Targets: s.env.Targets}
	for i := 1; i <= n; i++ {
		in, _ := json.Marshal(map[string]string{"command": command(i)})
		req.Approvals = append(req.Approvals, domain.BatchCall{Question: "Run " + command(i) + "?", Header: "Bash",
			Options: NoteApproval(true).Options, Action: &domain.Action{Tool: "Bash", Input: in, CallID: fmt.Sprintf("toolu_%02d", i)}})
	}
	res, err := s.env.Router.AskBatch(context.Background(), "ops", &req, "")
	if err != nil {
		s.t.Fatalf("asking a batch of %d: %v", n, err)
	}
	for i, q := range res.Questions {
		if q.BatchID != res.BatchID {
			s.t.Fatalf("call %d is in batch %s, not %s", i+1, q.BatchID, res.BatchID)
		}
		for _, tg := range q.Targets {
			if tg.Error != "" || tg.MessageTS == "" {
				s.t.Fatalf("posting call %d to %s failed: %q", i+1, tg.Channel, tg.Error)
			}
		}
	}
	s.settle()
	return res.Questions
}

func (s *bs) settle() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.env.Router.Flush(ctx); err != nil {
		s.t.Fatalf("flush: %v", err)
	}
}

func (s *bs) get(q *domain.Question) *domain.Question {
	s.t.Helper()
	got, err := s.env.Router.Question(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	return got
}

// oneMessage checks the surface holds one message and every call's copy
// is it.
func (s *bs) oneMessage(qs []*domain.Question) {
	s.t.Helper()
	s.sameCopy(qs, true)
}

// sameCopy checks every call's copy is the batch's message, and, when
// exact (or the surface edits its messages), that it is the only one.
func (s *bs) sameCopy(qs []*domain.Question, exact bool) {
	s.t.Helper()
	if n := s.d.Messages(); (exact || !s.env.Mails) && n != 1 {
		s.t.Fatalf("%d messages posted for a batch of %d calls, want 1", n, len(qs))
	}
	first := s.get(qs[0])
	for _, q := range qs[1:] {
		q = s.get(q)
		if len(q.Targets) != len(first.Targets) {
			s.t.Fatalf("call %s has copies %+v, want the batch's %+v", q.ID, q.Targets, first.Targets)
		}
		for i, tg := range q.Targets {
			if tg.MessageTS != first.Targets[i].MessageTS {
				s.t.Errorf("call %s's copy is message %q, not the batch's %q", q.ID, tg.MessageTS, first.Targets[i].MessageTS)
			}
		}
	}
}

// shows checks the copy shows each of the commands.
func (s *bs) shows(q *domain.Question, n int) string {
	s.t.Helper()
	text := s.d.Copy(q)
	for i := 1; i <= n; i++ {
		if !strings.Contains(text, command(i)) {
			s.t.Errorf("the batch's message does not show call %d's command %q:\n%s", i, command(i), text)
		}
	}
	return text
}

func (s *bs) status(q *domain.Question, want domain.Status, allowed bool) *domain.Question {
	s.t.Helper()
	got := s.get(q)
	if got.Status != want {
		s.t.Fatalf("call %s is %s, want %s", got.ID, got.Status, want)
	}
	if want == domain.StatusAnswered {
		isAllow := got.Decision != nil && got.Decision.Behavior == domain.BehaviorAllow
		if isAllow != allowed {
			s.t.Fatalf("call %s ended with decision %+v, want allowed=%t", got.ID, got.Decision, allowed)
		}
	}
	return got
}

func batchOneMessage(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(3)
	s.oneMessage(qs)
	s.shows(qs[0], 3)
	if !s.d.Live(qs[0]) {
		t.Fatal("the batch's message shows no controls")
	}
}

// batchConcurrent: three calls asked at the same moment (hooks run
// concurrently) still make one message, whichever posts first.
func batchConcurrent(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := make([]*domain.Question, 3)
	var wg sync.WaitGroup
	for i := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q, err := s.ask(i + 1)
			if err != nil {
				t.Error(err)
			}
			qs[i] = q
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	s.settle()
	for _, q := range qs[1:] {
		if q.BatchID != qs[0].BatchID {
			t.Fatalf("calls asked together are in batches %s and %s", qs[0].BatchID, q.BatchID)
		}
	}
	s.sameCopy(qs, false)
	s.shows(qs[0], 3)
	s.d.All(Alice, qs[0], domain.DecideAllow, "")
	s.settle()
	for _, q := range qs {
		s.status(q, domain.StatusAnswered, true)
	}
}

func batchJoin(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(3)
	qs = append(qs, s.call(4))
	s.settle()
	if qs[3].BatchID != qs[0].BatchID {
		t.Fatalf("the 4th call is in batch %s, not %s", qs[3].BatchID, qs[0].BatchID)
	}
	if s.env.Mails {
		// A sent mail cannot change: the 4th call brings one more mail,
		// listing all four.
		if n := s.d.Messages(); n != 2 {
			t.Fatalf("%d mails for a batch of 3 joined by a 4th call, want 2", n)
		}
	} else {
		s.oneMessage(qs)
	}
	s.shows(qs[0], 4)
	// The joined call's own controls work on the batch's message.
	s.d.ClickCall(Alice, qs[3], "Allow")
	s.status(qs[3], domain.StatusAnswered, true)
}

func batchAllowAllKeeps(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(3)
	s.d.ClickCall(Bob, qs[1], "Deny")
	s.settle()
	if !s.d.Live(qs[0]) {
		t.Fatal("the message shows no controls once one call of three is decided")
	}
	s.d.All(Alice, qs[0], domain.DecideAllow, "")
	s.settle()
	a := s.status(qs[0], domain.StatusAnswered, true)
	s.status(qs[1], domain.StatusAnswered, false)
	s.status(qs[2], domain.StatusAnswered, true)
	if a.RespondedBy == nil || a.RespondedBy.ID != s.d.Person(Alice).ID {
		t.Errorf("Allow all recorded %+v, want %s", a.RespondedBy, Alice)
	}
	if b := s.get(qs[1]); b.RespondedBy == nil || b.RespondedBy.ID != s.d.Person(Bob).ID {
		t.Errorf("the call Bob denied is now by %+v: Allow all changed a decided call", b.RespondedBy)
	}
	text := s.shows(qs[0], 3)
	if !strings.Contains(text, "Allowed") || !strings.Contains(text, "Denied") {
		t.Errorf("the finished message does not show each call's outcome (Allowed, Denied):\n%s", text)
	}
	if s.d.Live(qs[0]) {
		t.Errorf("every call is decided but the message still shows controls:\n%s", text)
	}
}

func batchResponders(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	q1 := s.call(1, Alice)
	q2 := s.call(2, Bob)
	q3 := s.call(3)
	s.settle()
	s.sameCopy([]*domain.Question{q1, q2, q3}, false)
	before := len(s.d.Told(Alice))
	s.d.All(Alice, q1, domain.DecideAllow, "")
	s.settle()
	s.status(q1, domain.StatusAnswered, true)
	s.status(q2, domain.StatusPending, false)
	s.status(q3, domain.StatusAnswered, true)
	told := s.d.Told(Alice)[before:]
	if len(told) == 0 {
		t.Fatal("Alice was not told that a call of the batch is not hers to decide")
	}
	if !s.d.Live(q2) {
		t.Fatal("the call Alice may not decide lost its controls")
	}
	s.d.ClickCall(Bob, q2, "Allow")
	s.status(q2, domain.StatusAnswered, true)
}

func batchDenyAllNote(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(3)
	const note = "Allow" // reads like an answer: it is a reason all the same
	s.d.All(Alice, qs[0], domain.DecideDeny, note)
	s.settle()
	for _, q := range qs {
		got := s.status(q, domain.StatusAnswered, false)
		if bad := DeniedWithNote(got, note, s.d.Person(Alice)); len(bad) > 0 {
			t.Errorf("call %s: %s", q.ID, strings.Join(bad, "; "))
		}
	}
	if text := s.d.Copy(qs[0]); !strings.Contains(text, "Denied") {
		t.Errorf("the message does not say the calls were denied:\n%s", text)
	}
}

// batchDenyOneNote: one call's own "Deny with note…" on the batch's
// message denies that call alone, the note its reason, never an answer.
func batchDenyOneNote(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(2)
	const note = "1" // the Allow option's number: still a reason
	s.d.DenyCallWithNote(Alice, qs[1], note)
	s.settle()
	got := s.status(qs[1], domain.StatusAnswered, false)
	if bad := DeniedWithNote(got, note, s.d.Person(Alice)); len(bad) > 0 {
		t.Errorf("call 2: %s", strings.Join(bad, "; "))
	}
	s.status(qs[0], domain.StatusPending, false)
	if !s.d.Live(qs[0]) {
		t.Error("the message lost its controls while call 1 is waiting")
	}
}

func batchWithdrawn(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(3)
	if _, err := s.env.Router.Cancel(context.Background(), "ops", qs[2].ID, domain.CancelAgent, nil); err != nil {
		t.Fatal(err)
	}
	s.settle()
	if text := s.d.Copy(qs[0]); !s.env.Mails && !strings.Contains(strings.ToLower(text), "withdrawn") {
		t.Errorf("the message does not say call 3 was withdrawn:\n%s", text)
	}
	s.d.All(Alice, qs[0], domain.DecideAllow, "")
	s.settle()
	s.status(qs[0], domain.StatusAnswered, true)
	s.status(qs[1], domain.StatusAnswered, true)
	s.status(qs[2], domain.StatusCancelled, false)
	if s.d.Live(qs[0]) {
		t.Error("every call is decided or withdrawn but the message still shows controls")
	}
	if text := s.d.Copy(qs[0]); !strings.Contains(strings.ToLower(text), "withdrawn") {
		t.Errorf("the finished copy does not say call 3 was withdrawn:\n%s", text)
	}
}

// OverLimitCalls is a batch bigger than any surface shows with controls
// per call.
const OverLimitCalls = 30

func batchOverLimit(t *testing.T, newEnv BatchFactory) {
	s := startBatch(t, newEnv)
	qs := s.batch(OverLimitCalls)
	s.oneMessage(qs)
	text := s.shows(qs[0], OverLimitCalls)
	page := strings.TrimRight(s.env.PublicURL, "/") + "/batches/" + url.PathEscape(qs[0].BatchID)
	if !strings.Contains(text, page) {
		t.Errorf("a batch of %d calls does not link its page %s:\n%s", OverLimitCalls, page, text)
	}
	s.d.All(Alice, qs[0], domain.DecideAllow, "")
	s.settle()
	for _, q := range qs {
		s.status(q, domain.StatusAnswered, true)
	}
}
