package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testAdaptiveRoundTrip: conditions, free-text rules, defaults, images and
// the history shown come back as stored, and so does the answer's skipped
// list once the question is answered.
func testAdaptiveRoundTrip(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	min, max := 1.0, 9.5
	img := &domain.Image{URL: "https://img.example/a.png?x=1&y=\"2\"", Alt: "a chart ☃"}
	q := newQ(p, "run-1",
		domain.Item{Question: "Which auth?", Header: "Auth", Image: img, Options: []domain.Option{
			{Label: "API key", Value: "API key", Default: true, Image: img}, {Label: "OAuth", Value: "OAuth"}}},
		domain.Item{Question: "Key name?", Options: []domain.Option{}, ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}},
			Other: &domain.FreeTextRules{Pattern: `OPS-\d+`, MinLength: 2, MaxLength: 20, Hint: "a ticket id like OPS-123",
				Number: &domain.NumberRule{Min: &min, Max: &max, Integer: true}}},
		domain.Item{Question: "Scopes?", MultiSelect: true, Options: []domain.Option{{Label: "read", Value: "read", Default: true}, {Label: "write", Value: "write", Default: true}},
			ShowIf: &domain.ShowIf{Item: 0, NoneOf: []string{"API key"}}})
	q.ID = domain.NewQuestionID(p)
	q.Context, q.ContextImage = "see the chart", img
	q.OnTimeout = &domain.OnTimeout{UseDefaults: true}
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	q.History = []domain.PastAnswer{{QuestionID: "earlier", Answer: "API key; OPS-1", RespondedBy: &domain.Person{Platform: "slack", ID: "U1", Name: "maria"}, RespondedAt: at}}
	create(t, s, q)
	got, err := s.Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, q.Questions, got.Questions)
	assert.Equal(t, q.ContextImage, got.ContextImage)
	assert.Equal(t, q.OnTimeout, got.OnTimeout)
	require.Len(t, got.History, 1)
	assert.Equal(t, q.History[0].Answer, got.History[0].Answer)
	assert.True(t, at.Equal(got.History[0].RespondedAt))
	assert.Equal(t, "maria", got.History[0].RespondedBy.Name)

	a := domain.Answer{Answers: map[string]string{"Which auth?": "OAuth", "Scopes?": "read"},
		Selections: map[string][]string{"Which auth?": {"OAuth"}, "Scopes?": {"read"}}, Response: "OAuth; read",
		Skipped: []domain.Skipped{{Question: "Key name?", Reason: "not asked: asked only if “Auth” is API key"}}}
	final, err := s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
		By: &domain.Person{Platform: "api", ID: "u"}, At: time.Now().UTC(), Retention: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, a.Skipped, final.Skipped)
	got, err = open().Get(ctx, p, q.ID)
	require.NoError(t, err)
	assert.Equal(t, a.Skipped, got.Skipped, "skipped survives a round trip through the store")
	assert.NotContains(t, got.Answers, "Key name?")
	assert.Equal(t, q.Questions, got.Questions)
}

// testHistory: the history index names, newest answer first (under one
// retention), only the answered questions the same agent asked with the
// same items in the same project, at most limit, and forgets them with
// their records.
func testHistory(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p, other := project(), project()
	items := func(q string) []domain.Item {
		return []domain.Item{{Question: q, Options: []domain.Option{{Label: "API key", Value: "API key"}, {Label: "OAuth", Value: "OAuth"}}}}
	}
	key := domain.HistoryKey("bot", items("Which auth?"))
	ask := func(project, run, agent, text string) *domain.Question {
		q := newQ(project, run, items(text)...)
		q.ID, q.AgentID = domain.NewQuestionID(project), agent
		create(t, s, q)
		return q
	}
	answerAs := func(q *domain.Question, by string, retention time.Duration) {
		a := answer(by)
		a.Retention = retention
		_, err := s.Transition(ctx, q.ProjectID, q.ID, a)
		require.NoError(t, err)
	}
	first := ask(p, "run-1", "bot", "Which auth?")
	answerAs(first, "maria", time.Hour)
	time.Sleep(5 * time.Millisecond) // answered at a later millisecond
	second := ask(p, "run-2", "bot", "Which auth?")
	answerAs(second, "li", time.Hour)
	ask(p, "run-3", "bot", "Which auth?")                                 // pending: not history
	answerAs(ask(p, "run-4", "other-bot", "Which auth?"), "x", time.Hour) // another agent
	answerAs(ask(p, "run-5", "bot", "Which token?"), "x", time.Hour)      // other items
	answerAs(ask(other, "run-6", "bot", "Which auth?"), "x", time.Hour)   // another project

	ids := func(qs []*domain.Question, err error) []string {
		require.NoError(t, err)
		var out []string
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return out
	}
	assert.Equal(t, []string{second.ID, first.ID}, ids(open().History(ctx, p, key, 10)), "answered, newest first, from any replica")
	assert.Equal(t, []string{second.ID}, ids(open().History(ctx, p, key, 1)), "at most limit")
	assert.Len(t, ids(s.History(ctx, other, key, 10)), 1, "each project its own")
	assert.Empty(t, ids(s.History(ctx, p, "no-such-key", 10)))
	assert.Empty(t, ids(s.History(ctx, p, key, 0)))

	// A record goes after its retention, and with it its place in the
	// history.
	short := ask(p, "run-7", "bot", "Which auth?")
	answerAs(short, "ana", 300*time.Millisecond)
	assert.ElementsMatch(t, []string{short.ID, second.ID, first.ID}, ids(s.History(ctx, p, key, 10)))
	time.Sleep(400 * time.Millisecond)
	if tr, ok := s.(trimmer); ok {
		_, err := tr.Trim(ctx, time.Now())
		require.NoError(t, err)
	}
	assert.Equal(t, []string{second.ID, first.ID}, ids(s.History(ctx, p, key, 10)), "a record gone with retention leaves the history")
}
