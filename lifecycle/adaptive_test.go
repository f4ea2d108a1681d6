package lifecycle_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func askJSON(t *testing.T, body string) *domain.AskRequest {
	t.Helper()
	var req domain.AskRequest
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	return &req
}

// TestDeadlineAnswersWithTheDefaults: on_timeout.use_defaults answers every
// asked item with its defaults, marks the record defaulted, and lists the
// item the defaults hide in skipped.
func TestDeadlineAnswersWithTheDefaults(t *testing.T) {
	f := newFixture(t, "")
	res, err := f.router.Ask(ctx, "ops", askJSON(t, `{"timeout":"1m","questions":[
	 {"question":"Env?","options":[{"label":"dev","default":true},{"label":"prod"}]},
	 {"question":"Region?","options":[{"label":"eu"},{"label":"us"}],"show_if":{"item":0,"any_of":["prod"]}},
	 {"question":"Checks?","multiSelect":true,"options":[{"label":"lint","default":true},{"label":"test","default":true},{"label":"fuzz"}]}],
	 "on_timeout":{"use_defaults":true}}`), "")
	require.NoError(t, err)
	f.clock.add(time.Minute)
	n, err := f.router.ExpireDue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	q, err := f.store.Get(ctx, "ops", res.Question.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, q.Status)
	assert.True(t, q.Defaulted)
	assert.Equal(t, map[string]string{"Env?": "dev", "Checks?": "lint, test"}, q.Answers)
	require.Len(t, q.Skipped, 1)
	assert.Equal(t, "Region?", q.Skipped[0].Question)
}

// TestHistoryShownAndSuggested: the second time an agent asks the same
// question, the record carries the earlier answers (not another agent's,
// not another project's), and a route with suggest_from_history recommends
// the most frequent one.
func TestHistoryShownAndSuggested(t *testing.T) {
	f := newFixture(t, "", domain.Route{Name: "suggest", SuggestFromHistory: true, Targets: []domain.Target{{Platform: "slack", Channel: "C1"}}})
	body := func(agent string) *domain.AskRequest {
		return &domain.AskRequest{AgentID: agent, Question: "Which auth?", Options: []domain.Option{{Label: "API key"}, {Label: "OAuth"}},
			Targets: []domain.Target{{Platform: "slack", Channel: "C1"}}}
	}
	answerAs := func(project, agent, label, who string) {
		res, err := f.router.Ask(ctx, project, body(agent), "")
		require.NoError(t, err)
		_, err = f.router.Answer(ctx, project, res.Question.ID, pick(label), slackP(who))
		require.NoError(t, err)
		f.clock.add(time.Hour)
	}
	answerAs("ops", "bot", "OAuth", "maria")
	answerAs("ops", "bot", "API key", "li")
	answerAs("ops", "bot", "API key", "maria")
	answerAs("ops", "other-bot", "OAuth", "x")
	answerAs("elsewhere", "bot", "OAuth", "y")

	res, err := f.router.Ask(ctx, "ops", body("bot"), "")
	require.NoError(t, err)
	require.Len(t, res.Question.History, 3)
	assert.Equal(t, "Last 3 times: API key (maria, 3 hours ago), API key (li, 4 hours ago), OAuth (maria, 5 hours ago)",
		domain.HistoryText(res.Question.History, f.clock.Now()))
	assert.False(t, res.Question.Questions[0].Options[0].Recommended, "no route asked for a suggestion")

	req := body("bot")
	req.Route, req.Targets = "suggest", nil
	req.RunID = "r-suggest"
	res, err = f.router.Ask(ctx, "ops", req, "")
	require.NoError(t, err)
	assert.True(t, res.Question.Questions[0].Options[0].Recommended, "API key, the most frequent earlier answer, is recommended")

	h, err := f.router.History(ctx, res.Question, 10, nil)
	require.NoError(t, err)
	assert.Len(t, h, 3)
	h, err = f.router.History(ctx, res.Question, 10, func(q *domain.Question) bool { return q.RespondedBy == nil || q.RespondedBy.ID != "li" })
	require.NoError(t, err)
	assert.Len(t, h, 2, "records the caller may not read are left out")
}

// TestHistoryFoundPastOtherQuestions: an earlier answer is found however
// many other questions the project asked since (history comes from an
// index, not from the project's newest records).
func TestHistoryFoundPastOtherQuestions(t *testing.T) {
	f := newFixture(t, "")
	n := 0
	seq := func() int { n++; return n }
	ask := func(text string) *domain.Question {
		res, err := f.router.Ask(ctx, "ops", &domain.AskRequest{AgentID: "bot", RunID: fmt.Sprintf("run-%d", len(text)*1000+seq()), Question: text,
			Options: []domain.Option{{Label: "API key"}, {Label: "OAuth"}}}, "")
		require.NoError(t, err)
		return res.Question
	}
	first := ask("Which auth?")
	_, err := f.router.Answer(ctx, "ops", first.ID, pick("OAuth"), slackP("maria"))
	require.NoError(t, err)
	for i := range 300 {
		q := ask(fmt.Sprintf("Deploy build %d?", i))
		_, err := f.router.Answer(ctx, "ops", q.ID, pick("API key"), slackP("li"))
		require.NoError(t, err)
	}
	again := ask("Which auth?")
	require.Len(t, again.History, 1, "the answer 300 questions ago is still history")
	assert.Equal(t, "OAuth", again.History[0].Answer)
	assert.Equal(t, "maria", again.History[0].RespondedBy.Name)
}
