package web

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// Batches of approvals on the web inbox (issue 39): one page with every
// call, each with its exact action and its own Allow / Deny, and Allow all
// / Deny all for the batch.

// askBatch asks Bash calls of one run as one batch, as the Claude Code
// hook's first hook of a turn does.
func (e *env) askBatch(run string, responders [][]string, cmds ...string) (string, []*domain.Question) {
	e.t.Helper()
	var qs []*domain.Question
	batch := ""
	for i, c := range cmds {
		in, _ := json.Marshal(map[string]string{"command": c})
		req := domain.AskRequest{RunID: run, Kind: domain.KindApproval, AgentName: "Claude Code", Question: "Allow Bash: " + c + "?",
			Header: "Approval", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}},
			Action: &domain.Action{Tool: "Bash", Input: in, CallID: "toolu_" + strconv.Itoa(i)}}
		if i < len(responders) {
			req.Responders = &domain.Responders{Users: responders[i]}
		}
		q := e.ask("ops", req)
		if batch == "" {
			batch = q.BatchID
		}
		if q.BatchID != batch {
			e.t.Fatalf("call %d is in batch %s, not %s", i, q.BatchID, batch)
		}
		qs = append(qs, q)
	}
	return batch, qs
}

var pendingRe = regexp.MustCompile(`name="q" value="([^"]+)"`)

func decideForm(c *client, page, decision, ret string) url.Values {
	c.t.Helper()
	p := c.getPage(page)
	f := url.Values{"csrf": {csrfRe.FindStringSubmatch(p.body)[1]}, "decision": {decision}, "return": {ret}}
	seen := map[string]bool{}
	for _, m := range pendingRe.FindAllStringSubmatch(p.body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			f.Add("q", m[1])
		}
	}
	return f
}

// TestBatchPageShowsEachCallWithItsOwnControls: the batch page shows every
// call's exact command and its own Allow / Deny / Deny with note, under one
// Allow all / Deny all that names how many calls it decides.
func TestBatchPageShowsEachCallWithItsOwnControls(t *testing.T) {
	e := newEnv(t, envOptions{})
	batch, qs := e.askBatch("turn-1", nil, "rm -rf build1", "rm -rf build2", "rm -rf build3")
	p := e.client().getPage("/batches/" + batch)
	if p.status != http.StatusOK {
		t.Fatalf("status %d: %s", p.status, p.body)
	}
	for _, q := range qs {
		cmd := strings.TrimSuffix(strings.TrimPrefix(q.Questions[0].Question, "Allow Bash: "), "?")
		if !strings.Contains(p.body, `<pre class="action-command"><code>`+html.EscapeString(cmd)+`</code></pre>`) {
			t.Errorf("the page does not show %q as its exact command", cmd)
		}
		if !strings.Contains(p.body, `action="/questions/`+q.ID+`/answer"`) {
			t.Errorf("call %s has no Allow / Deny of its own", q.ID)
		}
	}
	for _, want := range []string{"3 tool calls to approve", "Allow all 3", "Deny all 3", "Deny all with note…", `action="/batches/` + batch + `/decide"`, `name="return" value="batch"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the batch page lacks %q", want)
		}
	}
	if n := strings.Count(p.body, "Deny with note…"); n != 3 {
		t.Errorf("%d Deny with note… controls, want one per call", n)
	}
	frag := e.client().getPage("/batches/" + batch + "?fragment=head")
	if frag.status != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(frag.body), `<section class="batch-head"`) ||
		strings.Count(frag.body, `name="q"`) != 6 || strings.Contains(frag.body, "<html") {
		t.Errorf("the live strip fragment: status %d: %s", frag.status, frag.body)
	}
	if p := e.client().getPage("/batches/" + qs[1].ID); p.status != http.StatusNotFound {
		t.Errorf("a call that opened no batch names none: status %d", p.status)
	}
}

// TestAllowAllFromTheInbox: the inbox shows the batch's calls together
// under one strip; one click on Allow all allows every call, each its own
// decision, and the inbox is empty.
func TestAllowAllFromTheInbox(t *testing.T) {
	e := newEnv(t, envOptions{})
	other := e.ask("ops", domain.AskRequest{RunID: "other", Question: "Unrelated?"})
	batch, qs := e.askBatch("turn-1", nil, "rm -rf build1", "rm -rf build2", "rm -rf build3")
	c := e.client()
	p := c.getPage("/")
	if n := strings.Count(p.body, `class="batch-head"`); n != 1 {
		t.Fatalf("%d batch strips in the inbox, want 1", n)
	}
	head, first := strings.Index(p.body, `id="b-`+batch), strings.Index(p.body, `id="q-`+qs[0].ID)
	last := strings.Index(p.body, `id="q-`+qs[2].ID)
	if head < 0 || !(head < first && first < last) {
		t.Fatalf("the strip does not stand above the batch's calls: %d %d %d", head, first, last)
	}
	f := decideForm(c, "/", "allow", "inbox")
	if got := f["q"]; len(got) != 3 {
		t.Fatalf("Allow all decides %v, want the 3 calls", got)
	}
	r := c.post("/batches/"+batch+"/decide", f)
	if r.status != http.StatusSeeOther || r.location != "/" {
		t.Fatalf("status %d location %q: %s", r.status, r.location, r.body)
	}
	for _, q := range qs {
		got := e.get("ops", q.ID)
		if got.Status != domain.StatusAnswered || got.Decision == nil || got.Decision.Behavior != domain.BehaviorAllow {
			t.Errorf("%s: %s %+v", q.Questions[0].Question, got.Status, got.Decision)
		}
		if got.RespondedBy == nil || got.RespondedBy.Platform != "web" {
			t.Errorf("%s: decided by %+v, want the web viewer", q.ID, got.RespondedBy)
		}
	}
	if e.get("ops", other.ID).Status != domain.StatusPending {
		t.Error("Allow all touched a question outside the batch")
	}
	if p := c.getPage("/"); strings.Contains(p.body, "batch-head") {
		t.Error("the strip stays after every call was decided")
	}
}

// TestAllowAllKeepsACallDecidedOnItsOwn: a call denied on its own card
// keeps its denial when Allow all (from a page loaded before) follows; the
// page then says how the batch stands.
func TestAllowAllKeepsACallDecidedOnItsOwn(t *testing.T) {
	e := newEnv(t, envOptions{})
	batch, qs := e.askBatch("turn-1", nil, "rm -rf build1", "rm -rf build2", "rm -rf build3")
	c := e.client()
	stale := decideForm(c, "/batches/"+batch, "allow", "batch")
	tok := stale.Get("csrf")
	r := c.post("/questions/"+qs[1].ID+"/answer", url.Values{"csrf": {tok}, "return": {"batch"}, "a0": {"note"}, "t0": {"keep build2"}})
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.location, "/batches/"+batch) {
		t.Fatalf("deciding one call: status %d location %q", r.status, r.location)
	}
	r = c.post("/batches/"+batch+"/decide", stale)
	if r.status != http.StatusSeeOther {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	p := c.getPage(r.location)
	if !strings.Contains(p.body, "This batch of 3 calls: 2 allowed, 1 denied; none waiting.") {
		t.Errorf("no summary of the batch: %s", p.body)
	}
	want := []string{domain.BehaviorAllow, domain.BehaviorDeny, domain.BehaviorAllow}
	for i, q := range qs {
		if d := e.get("ops", q.ID).Decision; d == nil || d.Behavior != want[i] {
			t.Errorf("call %d: %+v, want %s", i+1, d, want[i])
		}
	}
	if d := e.get("ops", qs[1].ID).Decision; d == nil || d.Message == "" || !strings.Contains(d.Message, "keep build2") {
		t.Errorf("the denial's note was lost: %+v", d)
	}
}

// TestAllowAllLeavesACallThePersonMayNotDecide: alice may decide the
// first call and not the second: Allow all allows the first, the second
// stays pending, and the page tells her who may decide it.
func TestAllowAllLeavesACallThePersonMayNotDecide(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	batch, qs := e.askBatch("turn-1", [][]string{{"web:alice"}, {"web:bob"}}, "ls build", "rm -rf /srv/data")
	c := e.client()
	c.login("tok-alice-0123456789")
	r := c.post("/batches/"+batch+"/decide", decideForm(c, "/batches/"+batch, "allow", "batch"))
	if r.status != http.StatusOK {
		t.Fatalf("status %d location %q", r.status, r.location)
	}
	for _, want := range []string{"Allowed 1 of the calls.", "“Allow Bash: rm -rf /srv/data?” is still waiting", "web:bob"} {
		if !strings.Contains(html.UnescapeString(r.body), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	if got := e.get("ops", qs[0].ID); got.Status != domain.StatusAnswered {
		t.Errorf("the call alice may decide: %s", got.Status)
	}
	if got := e.get("ops", qs[1].ID); got.Status != domain.StatusPending {
		t.Errorf("the call only bob may decide: %s", got.Status)
	}

	// Someone allowed for no call changes nothing and is told so.
	e.auth.ops["tok-carol-0123456789"] = fakeOp{id: "carol", projects: []string{"ops"}}
	carol := e.client()
	carol.login("tok-carol-0123456789")
	r = carol.post("/batches/"+batch+"/decide", decideForm(carol, "/batches/"+batch, "deny", "batch"))
	if r.status != http.StatusForbidden || !strings.Contains(html.UnescapeString(r.body), "Nothing was decided") {
		t.Errorf("status %d: %s", r.status, r.body)
	}
	if got := e.get("ops", qs[1].ID); got.Status != domain.StatusPending {
		t.Errorf("a refused Deny all decided: %s", got.Status)
	}
}

// TestDenyAllWithNoteFromAQuestionPage: a call's own page (where chat
// links lead) carries its batch's strip; Deny all with a note denies every
// call with the note as the agent's reason.
func TestDenyAllWithNoteFromAQuestionPage(t *testing.T) {
	e := newEnv(t, envOptions{})
	batch, qs := e.askBatch("turn-1", nil, "rm -rf a", "rm -rf b")
	c := e.client()
	p := c.getPage("/questions/" + qs[1].ID)
	if !strings.Contains(p.body, `href="/batches/`+batch+`"`) || !strings.Contains(p.body, "Allow all 2") {
		t.Fatal("the question page of a batched call has no batch strip")
	}
	f := decideForm(c, "/questions/"+qs[1].ID, "deny", "question")
	f.Set("back", qs[1].ID)
	f.Set("reason", "not on a Friday")
	r := c.post("/batches/"+batch+"/decide", f)
	if r.status != http.StatusSeeOther || r.location != "/questions/"+qs[1].ID {
		t.Fatalf("status %d location %q", r.status, r.location)
	}
	for _, q := range qs {
		if d := e.get("ops", q.ID).Decision; d == nil || d.Behavior != domain.BehaviorDeny || d.Message != "not on a Friday" {
			t.Errorf("%s: %+v", q.ID, d)
		}
	}
}
