package web

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

// TestBrowserEditApprovalDiffAndEdit: a Claude Code Edit of 300 lines
// shows every removed and added line on the question page, on screen
// (no line hidden, clipped or scrolled away inside a box), added and
// removed lines drawn differently; an edit made in the page's form
// reaches the agent as the decision's arguments.
func TestBrowserEditApprovalDiffAndEdit(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", editAction("sess-diff", 300))
	run(t, ctx, 30*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+q.ID), chromedp.WaitVisible(chromedp.CSS(`.action pre.diff`)))

	type stats struct {
		Add, Del, Visible, Clipped int
		PreScroll, PreClient       float64
		AddBg, DelBg, PreBg        string
		First, Last                string
	}
	s := value(t, ctx, chromedp.Evaluate[stats](`(function(){
		var pre = document.querySelector(".action pre.diff"), pr = pre.getBoundingClientRect();
		var lines = pre.querySelectorAll(".dl"), vis = 0, clip = 0;
		lines.forEach(function(l){
			var r = l.getBoundingClientRect();
			if (l.checkVisibility() && r.height > 0) vis++;
			if (r.top < pr.top - 1 || r.bottom > pr.bottom + 1 || r.width > pr.width + 1) clip++;
		});
		var add = pre.querySelector(".dl.add"), del = pre.querySelector(".dl.del");
		var adds = pre.querySelectorAll(".dl.add");
		return {Add: adds.length, Del: pre.querySelectorAll(".dl.del").length, Visible: vis, Clipped: clip,
			PreScroll: pre.scrollHeight, PreClient: pre.clientHeight,
			AddBg: getComputedStyle(add).backgroundColor, DelBg: getComputedStyle(del).backgroundColor, PreBg: getComputedStyle(pre).backgroundColor,
			First: adds[0].textContent, Last: adds[adds.length-1].textContent};
	})()`))
	if s.Add != 300 || s.Del != 300 {
		t.Errorf("the page shows %d added and %d removed lines, want 300 each", s.Add, s.Del)
	}
	if s.Visible < 600 || s.Clipped != 0 || s.PreScroll > s.PreClient+1 {
		t.Errorf("not every diff line is on the page: %d visible, %d outside the box, box scrolls %v of %v", s.Visible, s.Clipped, s.PreScroll, s.PreClient)
	}
	if s.AddBg == s.DelBg || s.AddBg == s.PreBg {
		t.Errorf("added and removed lines are not coloured apart: %s / %s on %s", s.AddBg, s.DelBg, s.PreBg)
	}
	if s.First != "+new line 1" || s.Last != "+new line 300" {
		t.Errorf("added lines run %q … %q", s.First, s.Last)
	}

	got := e.waiter("ops", q.ID)
	run(t, ctx, 30*time.Second,
		chromedp.Click(chromedp.CSS(card(q.ID)+` details.action-edit summary`)),
		chromedp.WaitVisible(chromedp.CSS(card(q.ID)+` .edit-form textarea`)))
	edited := value(t, ctx, chromedp.Evaluate[bool](`(function(){
		var ta = document.querySelector(".edit-form textarea");
		var before = ta.value;
		ta.value = ta.value.replace("new line 7\\nnew line 8", "new line seven\\nnew line 8");
		return ta.value !== before;
	})()`))
	if !edited {
		t.Fatal("the edit form is not pre-filled with the arguments")
	}
	run(t, ctx, 30*time.Second,
		chromedp.Click(chromedp.CSS(card(q.ID)+` .edit-form button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`.decision-line`)))
	w := <-got
	if w.err != nil || w.q.Decision == nil || !w.q.Decision.Edited {
		t.Fatalf("agent got %v %+v", w.err, w.q.Decision)
	}
	var in struct {
		NewString string `json:"new_string"`
	}
	_ = json.Unmarshal(w.q.Decision.Input, &in)
	if !strings.Contains(in.NewString, "new line 6\nnew line seven\nnew line 8\n") {
		t.Errorf("the agent's arguments lack the edit: %.200s", in.NewString)
	}
	if line := value(t, ctx, chromedp.Text(chromedp.CSS(`.decision-line`))); line != "Allowed with edits" {
		t.Errorf("outcome %q", line)
	}
	// The answered page shows the file edit that runs, line by line.
	if n := value(t, ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll(".decision pre.diff .dl.add")).filter(function(l){ return l.checkVisibility() && l.textContent === "+new line seven" }).length`)); n != 1 {
		t.Errorf("the outcome does not show the edited file diff (%d lines \"+new line seven\")", n)
	}
}

// TestBrowserScreenshotApprovalDiff renders docs/img/approval-diff.png:
// a Claude Code Edit approval on its question page. Run with
// ASKBRIDGE_SCREENSHOTS=1.
func TestBrowserScreenshotApprovalDiff(t *testing.T) {
	if os.Getenv("ASKBRIDGE_SCREENSHOTS") != "1" {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/*.png")
	}
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	oldS := "func (s *Server) timeout() time.Duration {\n\treturn 30 * time.Second\n}\n"
	newS := "func (s *Server) timeout() time.Duration {\n\tif s.cfg.Timeout > 0 {\n\t\treturn s.cfg.Timeout\n\t}\n\treturn 30 * time.Second\n}\n"
	in, _ := json.Marshal(map[string]string{"file_path": "/home/dev/shop/server/server.go", "old_string": oldS, "new_string": newS})
	req := hookApproval("sess-4e1d")
	req.Question = "Allow Edit of server/server.go?"
	req.Context = "Claude Code in `~/src/shop`"
	req.Timeout = dur(9 * time.Minute)
	req.Action = &domain.Action{Tool: "Edit", Input: in, Suggestions: []json.RawMessage{
		json.RawMessage(`{"type": "setMode", "mode": "acceptEdits", "destination": "session"}`)}}
	q := e.ask("ops", req)
	file := filepath.Join(repoRoot(t), "docs", "img", "approval-diff.png")
	run(t, ctx, 20*time.Second,
		chromedp.EmulateViewport(900, 900),
		chromedp.Navigate(e.srv.URL+"/questions/"+q.ID),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)),
		chromedp.Sleep(300*time.Millisecond))
	png := value(t, ctx, chromedp.FullScreenshot(100))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", file)
}

// TestBrowserActionAnsweredElsewhereShowsOutcome: the edit form's
// pre-filled arguments are not "something the person typed": an open
// question page whose approval is decided elsewhere shows the outcome,
// instead of keeping a stale card that says an answer was not sent.
func TestBrowserActionAnsweredElsewhereShowsOutcome(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", bashAction("sess-else", "rm -rf build"))
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+q.ID),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	if _, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{EditedInput: json.RawMessage(`{"command": "rm -rf build/tmp"}`)},
		domain.Person{Platform: "slack", ID: "U1", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	line := value(t, ctx, chromedp.Poll[string](`(function(){ var o = document.querySelector("p.outcome"); return o ? o.textContent : null })()`))
	if !strings.HasPrefix(line, "Allowed with edits by maria (Slack)") {
		t.Errorf("outcome %q", line)
	}
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll(".settled-note").length`)); n != 0 {
		t.Error("the page kept the stale card as if the person had typed an answer")
	}
}
