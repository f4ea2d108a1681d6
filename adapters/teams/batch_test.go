package teams

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// batchDriver acts as the batch suite's people in Teams: it presses the
// batch card's Action.Execute buttons as the card shows now (signed
// adaptiveCard/action invokes from the fake Teams) and keeps the notices
// only the presser was shown (the attention container of their view).
type batchDriver struct{ driver }

func (d *batchDriver) Messages() int { return len(d.e.F.Activities(testChannel)) }

// current is the card of q's copy as it shows now.
func (d *batchDriver) current(q *domain.Question) json.RawMessage {
	d.t.Helper()
	return d.e.F.Activity(d.get(q).Targets[0].MessageTS).Card()
}

// forCall reports whether a control's data names call q.
func forCall(a seenControl, q *domain.Question) bool {
	return ActionQuestionID(a.Data) == q.ID
}

// pressNow sends the invoke of a on q's copy as it is now, with inputs,
// and keeps the private notice of the view the person got back.
func (d *batchDriver) pressNow(name string, q *domain.Question, a seenControl, inputs map[string]string) {
	d.t.Helper()
	data := map[string]any{}
	_ = json.Unmarshal(a.Data, &data)
	for k, v := range inputs {
		data[k] = v
	}
	b, _ := json.Marshal(data)
	r := d.e.F.Invoke(d.e.Endpoint, d.user(name), d.get(q).Targets[0].MessageTS, a.Verb, b)
	if r.Type != cardContentType {
		d.t.Fatalf("pressing %q answered %s: %s", a.Title, r.Type, r.Value)
	}
	if notice := privateNotice(r.Value); notice != "" {
		d.mu.Lock()
		if d.told == nil {
			d.told = map[string][]string{}
		}
		d.told[name] = append(d.told[name], notice)
		d.mu.Unlock()
	}
}

// privateNotice is the text of the attention container a person's own
// view starts with, "" when it has none.
func privateNotice(card json.RawMessage) string {
	var c struct {
		Body []map[string]any `json:"body"`
	}
	_ = json.Unmarshal(card, &c)
	if len(c.Body) == 0 || c.Body[0]["style"] != "attention" {
		return ""
	}
	b, _ := json.Marshal(c.Body[0])
	return seenText(b)
}

func (d *batchDriver) get(q *domain.Question) *domain.Question {
	d.t.Helper()
	got, err := d.e.Router.Question(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		d.t.Fatal(err)
	}
	return got
}

// Copy is the card's text and the addresses its Open buttons link to.
func (d *batchDriver) Copy(q *domain.Question) string {
	c := d.current(q)
	text := seenText(c)
	seenWalk(seenDecode(c), func(m map[string]any) {
		if u, ok := m["url"].(string); ok && m["type"] == "Action.OpenUrl" {
			text += "\n" + m["title"].(string) + ": " + u
		}
	})
	return text
}

func (d *batchDriver) Live(q *domain.Question) bool { return seenLive(d.current(q)) }

func (d *batchDriver) ClickCall(name string, q *domain.Question, label string) {
	d.t.Helper()
	for _, a := range seenActions(d.current(q)) {
		if a.Type == "Action.Execute" && a.Title == label && forCall(a, q) {
			d.pressNow(name, q, a, nil)
			return
		}
	}
	d.t.Fatalf("the batch card has no %q for call %s:\n%s", label, q.ID, d.Copy(q))
}

func (d *batchDriver) DenyCallWithNote(name string, q *domain.Question, note string) {
	d.t.Helper()
	for _, sc := range seenActions(d.current(q)) {
		if sc.Type != "Action.ShowCard" || sc.Title != "Deny with note…" {
			continue
		}
		for _, a := range seenActions(sc.Card) {
			if a.Type == "Action.Execute" && forCall(a, q) {
				fill := map[string]string{}
				for id := range seenInputs(sc.Card) {
					fill[id] = note
				}
				d.pressNow(name, q, a, fill)
				return
			}
		}
	}
	d.t.Fatalf("the batch card has no Deny with note… for call %s", q.ID)
}

func (d *batchDriver) All(name string, q *domain.Question, decision, note string) {
	d.t.Helper()
	c := d.current(q)
	if note != "" {
		sc, ok := seenAction(c, "Deny all with note…")
		if !ok || sc.Type != "Action.ShowCard" {
			d.t.Fatalf("the batch card has no Deny all with note…")
		}
		for _, a := range seenActions(sc.Card) {
			if a.Type == "Action.Execute" {
				fill := map[string]string{}
				for id := range seenInputs(sc.Card) {
					fill[id] = note
				}
				d.pressNow(name, q, a, fill)
				return
			}
		}
		d.t.Fatalf("Deny all with note… has no button to send it")
	}
	want := "Allow all "
	if decision == domain.DecideDeny {
		want = "Deny all "
	}
	for _, a := range seenActions(c) {
		if a.Type == "Action.Execute" && strings.HasPrefix(a.Title, want) && !strings.Contains(a.Title, "note") {
			d.pressNow(name, q, a, nil)
			return
		}
	}
	d.t.Fatalf("the batch card has no %q…:\n%s", want, seenText(c))
}

// TestBatchConformance runs the batch suite (one card per batch, per-call
// and Allow all / Deny all decisions, responders per call, over the
// limit) through signed adaptiveCard/action invokes.
func TestBatchConformance(t *testing.T) {
	const public = "https://bridge.example.com"
	channeltest.RunBatch(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.BatchEnv {
		e := newEnv(t, &rc, func(c *Config) { c.PublicURL = public })
		return &channeltest.BatchEnv{Router: e.Router, Targets: []domain.Target{{Platform: Platform, Channel: testChannel}},
			Driver: &batchDriver{driver{t: t, e: e}}, PublicURL: public}
	})
}

// TestHugeBatchStaysWithinTeamsLimits: a batch of 300 calls is still one
// card Teams takes (its 28 KB), with as many calls as fit, how many more
// there are, the batch page's link, and Allow all for all 300.
func TestHugeBatchStaysWithinTeamsLimits(t *testing.T) {
	const public = "https://bridge.example.com"
	b := channeltest.HugeBatch(300, time.Now())
	card, err := BatchCard(b, CardView{PublicURL: public})
	if err != nil {
		t.Fatal(err)
	}
	if len(card) > maxCardBytes {
		t.Fatalf("the card is %d bytes: more than Teams takes (%d)", len(card), maxCardBytes)
	}
	for _, want := range []string{"Bash: rm -rf build1 xxxxxxxx", "more calls", public + "/batches/" + b.ID, "Allow all 300"} {
		if !strings.Contains(string(card), want) {
			t.Errorf("the card does not say %q", want)
		}
	}
	allow, ok := seenAction(card, "Allow all 300")
	if !ok {
		t.Fatal("no Allow all 300")
	}
	req, err := ParseBatchAction(b, verbAllowAll, allow.Data)
	if err != nil || len(req.Questions) != 300 {
		t.Fatalf("Allow all 300 decides %d calls (%v), want 300", len(req.Questions), err)
	}
}

// schemaBatches are the golden batches and one of 300 calls (one line per
// call, as many as fit), every layout a batch card has.
func schemaBatches(t testing.TB) map[string]*domain.Batch {
	bs := goldenBatches(t)
	bs["batch-huge"] = channeltest.HugeBatch(300, time.Now())
	return bs
}

// TestBatchInvokeAnswersWithTheBatchCard: whoever presses a control of a
// batch card gets the batch card back as it is now (Teams shows them the
// invoke's answer in place of the card), never one call's own card: after
// one call's Allow, after a refresh, and, with the calls they may not
// decide named, after Allow all.
func TestBatchInvokeAnswersWithTheBatchCard(t *testing.T) {
	e := newEnv(t, nil)
	var qs []*domain.Question
	for i := 1; i <= 3; i++ {
		in, _ := json.Marshal(map[string]string{"command": "rm -rf build" + strconv.Itoa(i)})
		req := domain.AskRequest{Kind: domain.KindApproval, Question: "Run it?", Options: channeltest.NoteApproval(true).Options,
			Action: &domain.Action{Tool: "Bash", Input: in}}
		if i == 3 {
			req.Responders = &domain.Responders{Users: []string{"teams:aad-bob"}}
		}
		qs = append(qs, e.ask(t, req))
	}
	e.settle(t)
	res := struct {
		BatchID   string
		Questions []*domain.Question
	}{qs[0].BatchID, qs}
	if qs[2].BatchID != res.BatchID {
		t.Fatalf("the calls are in batches %s and %s", res.BatchID, qs[2].BatchID)
	}
	res.Questions[0] = e.get(t, qs[0])
	id := res.Questions[0].Targets[0].MessageTS
	// A call joining re-renders the card after its post: on a loaded
	// machine the flush can return before the last re-render lands (CI
	// once pressed a card that had no Allow for call 1 yet).
	var card json.RawMessage
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		card = e.F.Activity(id).Card()
		if strings.Contains(string(card), "rm -rf build3") || time.Now().After(deadline) {
			break
		}
	}
	press := func(who string, a seenControl) json.RawMessage {
		r := e.F.Invoke(e.Endpoint, faketeams.User{AADObjectID: "aad-" + who, Name: who}, id, a.Verb, a.Data)
		if r.Type != cardContentType {
			t.Fatalf("pressing %q answered %s: %s", a.Title, r.Type, r.Value)
		}
		return r.Value
	}
	var allow seenControl
	for _, a := range seenActions(card) {
		if a.Title == "Allow" && ActionQuestionID(a.Data) == res.Questions[0].ID {
			allow = a
		}
	}
	if allow.Title == "" {
		t.Fatalf("the card shows no Allow for call 1:\n%s", seenText(card))
	}
	got := seenText(press("alice", allow))
	for _, want := range []string{"3 approvals needed", "1 of 3 decided", "rm -rf build2", "rm -rf build3", "Allowed"} {
		if !strings.Contains(got, want) {
			t.Errorf("after one call's Allow the person sees no %q:\n%s", want, got)
		}
	}
	// Call 2's own Edit…: the edited command is what call 2 runs.
	var edit seenControl
	var editInput string
	for _, sc := range seenActions(e.F.Activity(id).Card()) {
		if sc.Type == "Action.ShowCard" && sc.Title == "Edit…" {
			for _, a := range seenActions(sc.Card) {
				if a.Type == "Action.Execute" && ActionQuestionID(a.Data) == qs[1].ID {
					edit = a
					for in := range seenInputs(sc.Card) {
						editInput = in
					}
				}
			}
		}
	}
	if edit.Verb == "" {
		t.Fatal("call 2 has no Edit… on the batch card")
	}
	var d map[string]any
	_ = json.Unmarshal(edit.Data, &d)
	d[editInput] = "rm -rf build2/tmp"
	edit.Data, _ = json.Marshal(d)
	if got := seenText(press("alice", edit)); !strings.Contains(got, "2 of 3 decided") {
		t.Errorf("after call 2's Edit… the person sees:\n%s", got)
	}
	if got := e.get(t, qs[1]); got.Decision == nil || !strings.Contains(string(got.Decision.Input), "build2/tmp") {
		t.Errorf("call 2 was decided with %+v, want the edited command", got.Decision)
	}
	refresh := seenControl{Title: "refresh", Verb: VerbRefresh, Data: json.RawMessage(`{"b":"` + res.BatchID + `"}`)}
	if got := seenText(press("alice", refresh)); !strings.Contains(got, "rm -rf build3") {
		t.Errorf("a refresh of the batch card shows:\n%s", got)
	}
	all, _ := seenAction(e.F.Activity(id).Card(), "Allow all 1")
	view := press("alice", all)
	notice := privateNotice(view)
	if !strings.Contains(notice, "call 3") || !strings.Contains(notice, "1 left pending") {
		t.Errorf("Alice is not told call 3 was left for someone else: %q", notice)
	}
	if !strings.Contains(seenText(view), "2 of 3 decided") || !strings.Contains(notice, "0 call(s) decided") {
		t.Errorf("Alice's view is not the batch as it is now:\n%s", seenText(view))
	}
	if got := e.get(t, res.Questions[2]); got.Status != domain.StatusPending {
		t.Errorf("call 3, Bob's alone, is %s", got.Status)
	}
}
