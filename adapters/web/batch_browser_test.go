package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

// TestBrowserAllowAllIsOneClick: three parallel calls of one turn appear
// live in the open inbox under one strip; one click on "Allow all 3"
// allows all three, each waiter getting its own call's decision.
func TestBrowserAllowAllIsOneClick(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	batch, qs := e.askBatch("turn-1", nil, "rm -rf build1", "rm -rf build2", "rm -rf build3")
	var got []<-chan waited
	for _, q := range qs {
		got = append(got, e.waiter("ops", q.ID))
	}
	// The open page shows the calls as they come, under the batch's strip.
	run(t, ctx, 20*time.Second, chromedp.WaitVisible(chromedp.CSS(card(qs[2].ID))),
		chromedp.WaitVisible(chromedp.CSS(`#b-`+batch+` button[value="allow"]`)),
		chromedp.Sleep(500*time.Millisecond)) // the last call's strip replaces the one before
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('#b-`+batch+` form.batch-decide input[name="q"]').length`)); n != 3 {
		t.Errorf("the live strip decides %d calls, want 3", n)
	}
	if label := value(t, ctx, chromedp.Text(chromedp.CSS(`#b-`+batch+` button[value="allow"]`))); strings.TrimSpace(label) != "Allow all 3" {
		t.Errorf("the button reads %q", label)
	}
	if os.Getenv("ASKBRIDGE_SCREENSHOTS") == "1" {
		run(t, ctx, 20*time.Second, chromedp.EmulateViewport(900, 900), chromedp.Navigate(e.srv.URL+"/batches/"+batch),
			chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)), chromedp.Sleep(300*time.Millisecond))
		png := value(t, ctx, chromedp.FullScreenshot(100))
		file := filepath.Join(repoRoot(t), "docs", "img", "approval-batch.png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", file)
		run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#b-`+batch)))
	}
	run(t, ctx, 20*time.Second, chromedp.Click(chromedp.CSS(`#b-`+batch+` button[value="allow"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#empty`)))
	for i, ch := range got {
		select {
		case w := <-ch:
			if w.err != nil || w.q.ID != qs[i].ID || w.q.Decision == nil || w.q.Decision.Behavior != domain.BehaviorAllow {
				t.Errorf("call %d: %v %+v", i+1, w.err, w.q)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d: the waiter got nothing", i+1)
		}
	}
}
