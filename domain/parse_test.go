package domain

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func question(items ...Item) *Question {
	return &Question{ID: "q1", Status: StatusPending, Questions: NormalizeItems(items)}
}

func respond(t *testing.T, body string) RespondRequest {
	var r RespondRequest
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	return r
}

func TestAnswerForms(t *testing.T) {
	auth := Item{Question: "Which auth method?", Header: "Auth", Options: []Option{{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key"}}}
	feats := Item{Question: "Which features?", MultiSelect: true, Options: opts("Login", "Dashboard", "Reports")}
	open := Item{Question: "Anything else?"}

	cases := []struct {
		name       string
		q          *Question
		body       string
		answers    map[string]string
		selections map[string][]string
		response   string
	}{
		{"value matches", question(auth), `{"response":"oauth"}`,
			map[string]string{"Which auth method?": "OAuth 2.0"}, map[string][]string{"Which auth method?": {"OAuth 2.0"}}, "oauth"},
		{"label any case", question(auth), `{"response":"api KEY"}`,
			map[string]string{"Which auth method?": "API key"}, map[string][]string{"Which auth method?": {"API key"}}, "API key"},
		{"free text other", question(auth), `{"response":"SAML please"}`,
			map[string]string{"Which auth method?": "SAML please"}, map[string][]string{"Which auth method?": {"SAML please"}}, "SAML please"},
		{"multi from list", question(feats), `{"answers":{"Which features?":["Login","dashboard"]}}`,
			map[string]string{"Which features?": "Login, Dashboard"}, map[string][]string{"Which features?": {"Login", "Dashboard"}}, "Login, Dashboard"},
		{"multi from joined string", question(feats), `{"response":"Login, Reports"}`,
			map[string]string{"Which features?": "Login, Reports"}, map[string][]string{"Which features?": {"Login", "Reports"}}, "Login, Reports"},
		{"multi with other text", question(feats), `{"answers":{"Which features?":["Login","Audit log"]}}`,
			map[string]string{"Which features?": "Login, Audit log"}, map[string][]string{"Which features?": {"Login", "Audit log"}}, "Login, Audit log"},
		{"open ended", question(open), `{"response":"ship it friday"}`,
			map[string]string{"Anything else?": "ship it friday"}, map[string][]string{"Anything else?": {"ship it friday"}}, "ship it friday"},
		{"several items", question(auth, feats), `{"answers":{"Which auth method?":"oauth","Which features?":["Login"]}}`,
			map[string]string{"Which auth method?": "OAuth 2.0", "Which features?": "Login"},
			map[string][]string{"Which auth method?": {"OAuth 2.0"}, "Which features?": {"Login"}}, "oauth; Login"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := ParseAnswer(c.q, respond(t, c.body))
			require.NoError(t, err)
			assert.Equal(t, c.answers, a.Answers)
			assert.Equal(t, c.selections, a.Selections)
			assert.Equal(t, c.response, a.Response)
		})
	}
}

func TestInvalidAnswers(t *testing.T) {
	single := Item{Question: "Pick", Options: opts("A", "B")}
	other := Item{Question: "Other", Options: opts("C", "D")}
	cases := map[string]struct {
		q    *Question
		body string
	}{
		"nothing":                   {question(single), `{}`},
		"empty response":            {question(single), `{"response":"  "}`},
		"two for single select":     {question(single), `{"answers":{"Pick":["A","B"]}}`},
		"response on several items": {question(single, other), `{"response":"A"}`},
		"partial answers":           {question(single, other), `{"answers":{"Pick":"A"}}`},
		"unknown item":              {question(single), `{"answers":{"Nope":"A"}}`},
		"both forms":                {question(single), `{"response":"A","answers":{"Pick":"A"}}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseAnswer(c.q, respond(t, c.body))
			require.Error(t, err)
			assert.Equal(t, EInvalidAnswer, ErrorCode(err))
			assert.NotEmpty(t, err.(*Error).Details)
		})
	}
}

func TestAllowed(t *testing.T) {
	r := Responders{Users: []string{"slack:U1"}, Groups: map[string][]string{"slack_usergroups": {"S1"}, "discord_roles": {"R1"}}}
	assert.True(t, Allowed(r, Person{Platform: "slack", ID: "U1"}))
	assert.False(t, Allowed(r, Person{Platform: "discord", ID: "U1"}), "ids are per platform")
	assert.True(t, Allowed(r, Person{Platform: "slack", ID: "U2", Groups: []string{"S1"}}))
	assert.False(t, Allowed(r, Person{Platform: "slack", ID: "U2", Groups: []string{"R1"}}), "a Discord role does not count on Slack")
	assert.True(t, Allowed(r, Person{Platform: "discord", ID: "9", Groups: []string{"R1"}}))
	assert.True(t, Allowed(Responders{}, Person{Platform: "api", ID: "x"}), "no responders: anyone")
}

func TestNotificationFollowsStatus(t *testing.T) {
	q := question(Item{Question: "Pick", Options: opts("A", "B")})
	q.AgentName, q.RunID = "Deploy bot", "run-1"
	n := NotificationFor(q)
	assert.Equal(t, "Agent question from Deploy bot", n.Title)
	assert.Equal(t, "Pick", n.Message)
	assert.Equal(t, "pending", n.ActionStatus)
	assert.False(t, n.Read)
	assert.Equal(t, []NotificationAction{{"A", "A"}, {"B", "B"}}, n.Actions)
	assert.Equal(t, "/questions/q1", n.ActionURL)
	q.Status = StatusAnswered
	n = NotificationFor(q)
	assert.True(t, n.Read)
	assert.Equal(t, "completed", n.ActionStatus)
}
