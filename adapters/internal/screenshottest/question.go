package screenshottest

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// Asker is what Past needs of the Router: asking, answering, and waiting
// for the copies to be updated.
type Asker interface {
	Ask(ctx context.Context, project string, req *domain.AskRequest, agentRoute string) (lifecycle.AskResult, error)
	Answer(ctx context.Context, project, id string, req domain.RespondRequest, who domain.Person) (*domain.Question, error)
	Flush(ctx context.Context) error
}

// Ask is the question of the docs' screenshots of questions that adapt
// (docs/adaptive-questions.md): a picture with the context and with each
// layout, the layout chosen by default, a follow-up asked only for the
// grid (its cards chosen by default), and a ticket id with rules.
func Ask(runID string) domain.AskRequest {
	return domain.AskRequest{RunID: runID, AgentID: "design-bot", AgentName: "Design bot", Timeout: durPtr(2 * time.Hour),
		Context:      "The new status dashboard ships on Monday. Pick how it looks.",
		ContextImage: &domain.Image{URL: PictureURL("layouts"), Alt: "The grid layout (left) and the list layout (right)"},
		Questions: []domain.Item{
			{Question: "Which layout should the dashboard use?", Header: "Layout", Options: []domain.Option{
				{Label: "Grid", Description: "Cards in three columns", Default: true, Image: &domain.Image{URL: PictureURL("grid"), Alt: "cards in a 3 by 3 grid"}},
				{Label: "List", Description: "One row per service", Image: &domain.Image{URL: PictureURL("list"), Alt: "one row per service"}}}},
			{Question: "Which cards go on the first row?", Header: "Cards", MultiSelect: true, Options: []domain.Option{
				{Label: "Errors", Default: true}, {Label: "Latency", Default: true}, {Label: "Deploys"}},
				ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"Grid"}}},
			{Question: "Which ticket approves the change?", Header: "Ticket",
				Other: &domain.FreeTextRules{Pattern: "OPS-[0-9]+", MaxLength: 12, Hint: "a ticket id like OPS-123"}},
		}}
}

// Past asks Ask twice in project on targets and answers it — as maria,
// then four days later as li — moving the Router's clock with advance, then
// two more days: the question asked next shows both as its history.
func Past(t *testing.T, r Asker, project string, targets []domain.Target, advance func(time.Duration)) {
	t.Helper()
	ctx := context.Background()
	for i, a := range []struct {
		who     domain.Person
		answers map[string]domain.StringList
		then    time.Duration
	}{
		{domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}, map[string]domain.StringList{
			"Which layout should the dashboard use?": {"Grid"}, "Which cards go on the first row?": {"Errors", "Latency"},
			"Which ticket approves the change?": {"OPS-471"}}, 4 * 24 * time.Hour},
		{domain.Person{Platform: "slack", ID: "U07QK2M1A", Name: "li"}, map[string]domain.StringList{
			"Which layout should the dashboard use?": {"List"}, "Which ticket approves the change?": {"OPS-455"}}, 2 * 24 * time.Hour},
	} {
		req := Ask("design-" + string(rune('a'+i)))
		req.Targets = targets
		res, err := r.Ask(ctx, project, &req, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Answer(ctx, project, res.Question.ID, domain.RespondRequest{Answers: a.answers}, a.who); err != nil {
			t.Fatal(err)
		}
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		advance(a.then)
	}
}

func durPtr(d time.Duration) *domain.Duration { v := domain.Duration(d); return &v }
