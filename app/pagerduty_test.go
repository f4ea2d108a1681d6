package app_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/pagerduty/fakepd"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With Slack configured, the person on call is matched to the Slack user
// with their email (users.lookupByEmail, cached): no mapping in the
// configuration is needed; someone else on Slack is still refused.
func TestOnCallMatchedToSlackByEmail(t *testing.T) {
	const token, key = "y_NbAkKc66ryYTWUXYEu", "R0UT1NGKEY0000000000000000000001"
	pd := fakepd.New(token, key)
	t.Cleanup(func() {
		pd.Close()
		assert.Empty(t, pd.Problems(), "requests and answers must match PagerDuty's OpenAPI documents")
	})
	pd.SetOnCalls(fakepd.OnCall{User: fakepd.User{ID: "PCAR001", Name: "Carla", Email: "Carla@Example.com"},
		ScheduleID: "PSCHED1", ScheduleName: "Primary", PolicyID: "P1", PolicyName: "Ops", Level: 1})
	sl := fakeslack.New("C1")
	t.Cleanup(sl.Close)
	sl.SetEmail("UCARLA", "carla@example.com")

	pu, _ := url.Parse(pd.URL)
	a, err := app.New(context.Background(), app.Settings{Addr: "127.0.0.1:0", PublicURL: "https://bridge.example",
		WebhookAllow: []string{pu.Host},
		Slack:        slack.Config{BotToken: sl.BotToken, SigningSecret: slackSecret, APIURL: sl.APIURL()},
		Routes: []domain.Route{{Name: "oncall", Timeout: time.Hour,
			Responders: domain.Responders{Groups: map[string][]string{pagerduty.KindSchedules: {"PSCHED1"}}}}},
		PagerDuty: &app.PagerDutySettings{APIURL: pd.URL, EventsURL: pd.URL, APIToken: token},
	})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	go a.Run(ctx)
	t.Cleanup(func() {
		stop()
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(cctx)
	})

	r := a.Router()
	res, err := r.Ask(context.Background(), "ops", &domain.AskRequest{RunID: "run-1", AgentID: "deploy-bot",
		Question: "Deploy?", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}, Route: "oncall"}, "")
	require.NoError(t, err)
	q := res.Question
	allow := "Allow"
	_, err = r.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: &allow}, domain.Person{Platform: "slack", ID: "UDAVE", Name: "dave"})
	assert.Equal(t, domain.ENotAllowed, domain.ErrorCode(err), "Dave is not on call")
	final, err := r.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: &allow}, domain.Person{Platform: "slack", ID: "UCARLA", Name: "carla"})
	require.NoError(t, err, "Carla is on call and is UCARLA on Slack by her email")
	assert.Equal(t, domain.StatusAnswered, final.Status)

	calls := sl.Calls("users.lookupByEmail")
	require.Len(t, calls, 1, "the lookup is cached")
	assert.True(t, strings.EqualFold(calls[0].Params["email"], "carla@example.com"), "%v", calls[0].Params)
}
