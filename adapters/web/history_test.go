package web

import (
	"context"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// historyRowOf is the <li> of question id on the history page, its tags
// dropped and entities decoded: the words a person reads.
func historyRowOf(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<li class="hrow" id="h-` + regexp.QuoteMeta(id) + `">(.*?)</li>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the history has no row for %s:\n%s", id, page)
	}
	text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], " ")
	return strings.Join(strings.Fields(html.UnescapeString(text)), " ")
}

// TestHistoryShowsWhatWasAsked: a finished question without a header is
// titled by its text, not "Question from <agent>", and every row shows
// the text of each item it asked, with or without headers.
func TestHistoryShowsWhatWasAsked(t *testing.T) {
	e := newEnv(t, envOptions{})
	bg := context.Background()
	maria := domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}
	plain := e.ask("ops", domain.AskRequest{RunID: "r1", AgentID: "deploy-bot", AgentName: "Deploy bot",
		Question: "Ship release 2.14 to production?", Options: []domain.Option{{Label: "Ship"}, {Label: "Hold"}}})
	headed := e.ask("ops", domain.AskRequest{RunID: "r2", AgentID: "deploy-bot", Questions: []domain.Item{
		{Question: "Which region first?", Header: "Region", Options: []domain.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}},
		{Question: "Backfill the orders table now?", Header: "Backfill", Options: []domain.Option{{Label: "Yes"}, {Label: "Later"}}}}})
	mixed := e.ask("ops", domain.AskRequest{RunID: "r3", AgentID: "schema-agent", Questions: []domain.Item{
		{Question: "Drop the old column?", Options: []domain.Option{{Label: "Drop"}, {Label: "Keep"}}},
		{Question: "Anything the reviewers should know?"}}})
	for _, q := range []*domain.Question{plain, headed, mixed} {
		if _, err := e.router.Cancel(bg, "ops", q.ID, domain.CancelUser, &maria); err != nil {
			t.Fatal(err)
		}
	}
	page := e.client().getPage("/history").body

	row := historyRowOf(t, page, plain.ID)
	if strings.Contains(row, "Question from") || !strings.Contains(row, "Ship release 2.14 to production?") {
		t.Errorf("a question without a header: %q", row)
	}
	row = historyRowOf(t, page, headed.ID)
	for _, want := range []string{"Region · Backfill", "Which region first?", "Backfill the orders table now?"} {
		if !strings.Contains(row, want) {
			t.Errorf("two items with headers: no %q in %q", want, row)
		}
	}
	row = historyRowOf(t, page, mixed.ID)
	for _, want := range []string{"Drop the old column?", "Anything the reviewers should know?"} {
		if !strings.Contains(row, want) {
			t.Errorf("two items without headers: no %q in %q", want, row)
		}
	}
	if strings.Contains(row, "questions from") {
		t.Errorf("two items without headers are titled by the agent: %q", row)
	}
}

// TestAnswerBannerNamesEveryItem: after answering a question of two items
// in the inbox, the banner names each item with its answer, not only the
// first item's text before both answers.
func TestAnswerBannerNamesEveryItem(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", domain.AskRequest{Questions: []domain.Item{
		{Question: "Which region first?", Header: "Region", Options: []domain.Option{{Label: "eu-west-1"}, {Label: "us-east-1"}}},
		{Question: "Backfill the orders table now?", Options: []domain.Option{{Label: "Yes"}, {Label: "Later"}}}}})
	c := e.client()
	p := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {c.csrf("/")}, "return": {"inbox"}, "a0": {"o1"}, "a1": {"o0"}})
	if p.location == "" {
		t.Fatalf("status %d: %s", p.status, p.body)
	}
	m := regexp.MustCompile(`(?s)<p class="flash" role="status">(.*?)</p>`).FindStringSubmatch(c.getPage(p.location).body)
	if m == nil {
		t.Fatal("no banner after answering")
	}
	got := html.UnescapeString(m[1])
	want := "Answered 2 questions: “Which region first?”: us-east-1; “Backfill the orders table now?”: Yes."
	if got != want {
		t.Errorf("banner:\n got %q\nwant %q", got, want)
	}
}
