package web

import (
	"bufio"
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// TestApprovalTallyOnCardsAndPage: an approval that needs several people
// says so on its card in the inbox and on its page, with the votes so far;
// once the deadline answers it by default, the page says that.
func TestApprovalTallyOnCardsAndPage(t *testing.T) {
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	e := newEnv(t, envOptions{clock: clock})
	two := 2
	q := e.ask("ops", domain.AskRequest{RunID: "deploy-7", Kind: domain.KindApproval, Question: "Deploy api v2 to production?",
		Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}, ApprovalsRequired: &two,
		OnTimeout: &domain.OnTimeout{Answer: "Deny"}, RequestedBy: "slack:U9",
		Responders: &domain.Responders{Users: []string{"slack:U1", "slack:U2", "web:local"}, ExcludeRequester: true}})
	c := e.client()
	for _, path := range []string{"/", "/questions/" + q.ID} {
		p := c.getPage(path)
		body := html.UnescapeString(p.body)
		if !strings.Contains(body, "Needs 2 approvals") || !strings.Contains(body, "no votes yet") {
			t.Errorf("%s does not say the question needs 2 approvals", path)
		}
		if !strings.Contains(body, "Who may answer: slack:U1, slack:U2, web:local (not slack:U9, who asked for it)") {
			t.Errorf("%s does not name who may answer", path)
		}
	}

	if _, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: ptr("Approve")},
		domain.Person{Platform: "slack", ID: "U1", Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	// The second vote comes from the web form, as the local user.
	form := map[string][]string{"csrf": {c.csrf("/")}, "return": {"inbox"}, "a0": {"o1"}}
	if p := c.post("/questions/"+q.ID+"/answer", form); p.status != http.StatusSeeOther {
		t.Fatalf("voting on the web: status %d: %s", p.status, p.body)
	}
	for _, path := range []string{"/", "/questions/" + q.ID} {
		body := html.UnescapeString(c.getPage(path).body)
		want := "Approve: 1 of 2 approvals — alice; Deny: 1 of 2 approvals — local web user"
		if !strings.Contains(body, want) {
			t.Errorf("%s does not show the tally %q", path, want)
		}
	}

	clock.add(time.Hour)
	if n, err := e.router.ExpireDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ExpireDue: %d, %v", n, err)
	}
	body := html.UnescapeString(c.getPage("/questions/" + q.ID).body)
	if !strings.Contains(body, "No answer in time; answered by default") || !strings.Contains(body, "Deny") {
		t.Errorf("the page of a defaulted question does not say so")
	}
	if strings.Contains(body, "1 of 2 approvals") {
		t.Errorf("a final question still shows the tally")
	}
	if strings.Contains(c.getPage("/").body, q.ID) {
		t.Errorf("the defaulted question is still in the inbox")
	}
}

func ptr(s string) *string { return &s }

// TestLiveStreamSendsTallyChanges: a vote on a pending approval tells open
// pages to refresh the card's tally (question.updated); the card fragment
// then shows it.
func TestLiveStreamSendsTallyChanges(t *testing.T) {
	// Its route pages: only a question the bridge paged can be acknowledged.
	e := newEnv(t, envOptions{routes: []domain.Route{{Name: "oncall", Page: &domain.Page{Pager: "pagerduty", Profile: "route oncall"}}}})
	two := 2
	q := e.ask("ops", domain.AskRequest{RunID: "deploy-8", Kind: domain.KindApproval, Question: "Deploy?", Route: "oncall",
		Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}, ApprovalsRequired: &two})
	c := e.client()
	c.getPage("/") // session cookie
	u, _ := url.Parse(e.srv.URL + "/inbox/events")
	req, _ := http.NewRequest("GET", u.String(), nil)
	for _, ck := range c.hc.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		typ := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				typ = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- typ + " " + v
			}
		}
		close(events)
	}()
	next := func() string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return ""
	}
	if ev := next(); !strings.HasPrefix(ev, "sync ") {
		t.Fatalf("first event %q", ev)
	}
	if _, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: ptr("Approve")},
		domain.Person{Platform: "slack", ID: "U1", Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); !strings.HasPrefix(ev, "question.updated ") || !strings.Contains(ev, q.ID) {
		t.Fatalf("after a vote: %q, want question.updated for %s", ev, q.ID)
	}
	card := html.UnescapeString(c.getPage("/questions/" + q.ID + "?fragment=card").body)
	if !strings.Contains(card, `<span class="tally">Approve: 1 of 2 approvals — alice</span>`) {
		t.Errorf("the card fragment does not show the tally:\n%s", card)
	}

	// The page is acknowledged in the pager: the card's remark changes too,
	// the pager's name for the person escaped.
	at := time.Date(2026, 3, 1, 3, 14, 0, 0, time.UTC)
	if err := e.router.PageAcknowledged(context.Background(), q.ID, "PagerDuty", "Ana <script>x</script>", at); err != nil {
		t.Fatal(err)
	}
	if ev := next(); !strings.HasPrefix(ev, "question.updated ") || !strings.Contains(ev, q.ID) {
		t.Fatalf("after a remark: %q, want question.updated for %s", ev, q.ID)
	}
	raw := c.getPage("/questions/" + q.ID + "?fragment=card").body
	if !strings.Contains(raw, `Acknowledged by Ana &lt;script&gt;x&lt;/script&gt; in PagerDuty at 03:14 UTC`) || strings.Contains(raw, "<script>x") {
		t.Errorf("the card fragment does not show the remark, escaped:\n%s", raw)
	}
}
