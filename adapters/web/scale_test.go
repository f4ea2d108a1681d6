package web

import (
	"compress/gzip"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

// fill asks n pending questions, deadlines one minute apart.
func fill(e *env, n int) []*domain.Question {
	var qs []*domain.Question
	for k := range n {
		qs = append(qs, e.ask("ops", domain.AskRequest{RunID: fmt.Sprintf("run-%03d", k), AgentID: "deploy-bot", AgentName: "Deploy bot",
			Header: "Deploy", Question: fmt.Sprintf("Deploy build %03d to production?", k), Timeout: dur(time.Duration(10+k) * time.Minute),
			Context: "Canary at 5% for 30 min: error rate **0.02%**, p99 212 ms. Rollback: `kubectl rollout undo deploy/api`.",
			Options: []domain.Option{{Label: "Deploy now", Description: "Roll out to 100% over 10 minutes", Recommended: true},
				{Label: "Hold", Description: "Keep the canary at 5% and ask again in an hour"}}}))
	}
	return qs
}

// get fetches path as a browser would, asking for gzip, and returns the
// response, the bytes on the wire and the decoded page.
func getGzip(t *testing.T, c *client, path string) (*http.Response, int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	wire, _ := io.ReadAll(res.Body)
	body := wire
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(strings.NewReader(string(wire)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(zr)
	}
	return res, len(wire), string(body)
}

// TestInboxWith200QuestionsIsPagedAndCompressed: 200 pending questions
// make a page of 25 cards, gzipped, with links to the other pages in
// deadline order; the count says 200.
func TestInboxWith200QuestionsIsPagedAndCompressed(t *testing.T) {
	e := newEnv(t, envOptions{})
	qs := fill(e, 200)
	c := e.client()
	res, wire, body := getGzip(t, c, "/")
	cards := regexp.MustCompile(`<article class="card`).FindAllStringIndex(body, -1)
	t.Logf("inbox with 200 pending: %d cards, %d bytes of HTML, %d bytes on the wire", len(cards), len(body), wire)
	if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
		t.Errorf("not compressed: %v", res.Header)
	}
	if len(cards) != pageSize || len(body) > 100_000 || wire > 20_000 {
		t.Errorf("%d cards, %d bytes (%d on the wire)", len(cards), len(body), wire)
	}
	if !strings.Contains(body, "200 questions are waiting") || !strings.Contains(body, "Showing 1–25") {
		t.Error("the page does not say how many wait and which are shown")
	}
	if !strings.Contains(body, qs[0].ID) || strings.Contains(body, qs[25].ID) {
		t.Error("page 1 is not the 25 nearest deadlines")
	}
	_, _, last := getGzip(t, c, "/?page=8")
	if !strings.Contains(last, qs[199].ID) || !strings.Contains(last, `rel="prev"`) || strings.Contains(last, `rel="next"`) {
		t.Error("page 8 does not hold the last questions")
	}
	// Without Accept-Encoding: plain.
	if p := c.getPage("/"); p.header.Get("Content-Encoding") != "" || !strings.Contains(p.body, "200 questions") {
		t.Errorf("plain request got %q", p.header.Get("Content-Encoding"))
	}
}

// TestStaticFilesHashedImmutableAndCompressed: pages link assets by a
// content-hashed name served as immutable (and gzipped); the plain name
// revalidates.
func TestStaticFilesHashedImmutableAndCompressed(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	page := c.getPage("/").body
	m := regexp.MustCompile(`href="(/static/app\.[0-9a-f]{12}\.css)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no hashed stylesheet link on the page")
	}
	res, wire, css := getGzip(t, c, m[1])
	if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("hashed asset Cache-Control %q", cc)
	}
	if res.Header.Get("Content-Encoding") != "gzip" || wire >= len(css) || !strings.Contains(css, ".card") {
		t.Errorf("asset not gzipped: %d on the wire for %d bytes", wire, len(css))
	}
	plain := c.getPage("/static/app.css")
	if cc := plain.header.Get("Cache-Control"); cc != "no-cache" || plain.header.Get("ETag") == "" {
		t.Errorf("plain asset Cache-Control %q, ETag %q", cc, plain.header.Get("ETag"))
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/static/app.css", nil)
	req.Header.Set("If-None-Match", plain.header.Get("ETag"))
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %v %v", r, err)
	}
}

// TestBrowserInboxWith200Questions: the page a browser builds stays small,
// and a new question due soonest still appears live on page 1 while the
// count follows every page.
func TestBrowserInboxWith200Questions(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	qs := fill(e, 200)
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	nodes := value(t, ctx, chromedp.Evaluate[int](`document.getElementsByTagName("*").length`))
	t.Logf("inbox with 200 pending: %d DOM nodes", nodes)
	if nodes > 2000 {
		t.Errorf("%d DOM nodes", nodes)
	}
	soon := e.ask("ops", domain.AskRequest{RunID: "urgent", Question: "Roll back now?", Timeout: dur(2 * time.Minute),
		Options: []domain.Option{{Label: "Roll back"}, {Label: "Wait"}}})
	run(t, ctx, 5*time.Second, chromedp.WaitVisible(chromedp.CSS(card(soon.ID))))
	first := value(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#cards article.card`), "data-id")).Value
	count := value(t, ctx, chromedp.Text(chromedp.CSS(`#count`)))
	shown := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#cards article.card").length`))
	if first != soon.ID || !strings.Contains(count, "201 questions") {
		t.Errorf("first card %s, count %q", first, count)
	}
	if shown > pageSize+1 {
		t.Errorf("the live stream added cards of other pages: %d shown", shown)
	}
	// The stream names only the page's questions; the count still follows
	// a question answered on another page, and no card shown is settled.
	if _, err := e.router.Answer(context.Background(), "ops", qs[150].ID, domain.RespondRequest{Response: ptr("Hold")},
		domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, 5*time.Second, chromedp.WaitVisible(chromedp.CSS(`#count[data-count="200"]`)))
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#cards article.card.settled, #cards .settled-note").length`)); n != 0 {
		t.Errorf("%d cards of page 1 were settled by an answer on another page", n)
	}
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/?page=3"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	time.Sleep(300 * time.Millisecond)
	on3 := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#cards article.card:not(.settled)").length`))
	if settled := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#cards .settled-note").length`)); on3 != pageSize || settled != 0 {
		t.Errorf("page 3 after the sync: %d cards, %d settled", on3, settled)
	}
}

// TestHistoryListsFinishedQuestionsWithFilters: the history page lists
// answered, expired and cancelled questions (never pending ones), newest
// first, filtered by agent, run, status and who answered, 25 a page.
func TestHistoryListsFinishedQuestionsWithFilters(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	e := newEnv(t, envOptions{clock: clock})
	bg := context.Background()
	maria := domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}
	var answered []*domain.Question
	for k := range 30 {
		q := e.ask("ops", domain.AskRequest{RunID: fmt.Sprintf("rel-%02d", k), AgentID: "deploy-bot", AgentName: "Deploy bot",
			Question: fmt.Sprintf("Ship release %02d?", k), Options: []domain.Option{{Label: "Ship"}, {Label: "Hold"}}})
		by := maria
		if k%2 == 1 {
			by = domain.Person{Platform: "discord", ID: "4455", Name: "alice"}
		}
		clock.add(time.Second)
		if _, err := e.router.Answer(bg, "ops", q.ID, domain.RespondRequest{Response: ptr("Ship")}, by); err != nil {
			t.Fatal(err)
		}
		answered = append(answered, q)
	}
	dismissed := e.ask("web", domain.AskRequest{RunID: "mig-1", AgentID: "schema-agent", Question: "Backfill orders?"})
	if _, err := e.router.Cancel(bg, "web", dismissed.ID, domain.CancelUser, &domain.Person{Platform: "web", ID: "bob", Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	expiring := e.ask("web", domain.AskRequest{RunID: "mig-2", AgentID: "schema-agent", Question: "Drop the old column?", Timeout: dur(time.Minute)})
	pending := e.ask("ops", domain.AskRequest{RunID: "still", Question: "Still waiting?"})
	clock.add(2 * time.Minute)
	if _, err := e.router.ExpireDue(bg); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	page := html.UnescapeString(c.getPage("/history").body)
	rows := strings.Count(page, `<li class="hrow`)
	if rows != pageSize || !strings.Contains(page, "32 questions") || strings.Contains(page, pending.ID) {
		t.Errorf("history page 1: %d rows; says 32? %v; pending listed? %v", rows, strings.Contains(page, "32 questions"), strings.Contains(page, pending.ID))
	}
	if strings.Index(page, expiring.ID) > strings.Index(page, answered[29].ID) {
		t.Error("not newest first")
	}
	for _, want := range []string{"Answered by maria (Slack)", "Expired without an answer", "Dismissed by bob"} {
		if !strings.Contains(page, want) {
			t.Errorf("history lacks %q", want)
		}
	}
	for filter, want := range map[string]int{
		"/history?who=maria":                           15,
		"/history?who=MAR&agent=deploy-bot":            15,
		"/history?status=expired":                      1,
		"/history?status=cancelled&agent=schema-agent": 1,
		"/history?run=rel-07":                          1,
		"/history?agent=Deploy+bot&page=2":             5,
		"/history?who=nobody":                          0,
	} {
		got := strings.Count(c.getPage(filter).body, `<li class="hrow`)
		if got != want {
			t.Errorf("%s: %d rows, want %d", filter, got, want)
		}
	}
}

// TestBrowserHistoryFilter: the history is linked from the header, and its
// form filters by who answered.
func TestBrowserHistoryFilter(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	bg := context.Background()
	for k, who := range []string{"maria", "alice", "maria"} {
		q := e.ask("ops", domain.AskRequest{RunID: fmt.Sprintf("h-%d", k), Question: fmt.Sprintf("Ship %d?", k), Options: []domain.Option{{Label: "Ship"}, {Label: "Hold"}}})
		if _, err := e.router.Answer(bg, "ops", q.ID, domain.RespondRequest{Response: ptr("Ship")}, domain.Person{Platform: "slack", ID: "U" + who, Name: who}); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`header nav a[href="/history"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#history`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="who"]`), "maria"),
		chromedp.Submit(chromedp.CSS(`input[name="who"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.filter-actions a[href="/history"]`)))
	n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#history li").length`))
	outcomes := value(t, ctx, chromedp.Text(chromedp.CSS(`#history`)))
	if n != 2 || strings.Contains(outcomes, "alice") {
		t.Errorf("filtered by maria: %d rows: %q", n, outcomes)
	}
}
