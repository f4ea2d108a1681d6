package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func opts(labels ...string) []Option {
	out := make([]Option, len(labels))
	for i, l := range labels {
		out[i] = Option{Label: l, Description: "about " + l}
	}
	return out
}

func TestShorthandBecomesOneItemWithValueDefaults(t *testing.T) {
	req := &AskRequest{Question: "Deploy?", Options: []Option{{Label: "Yes", Value: "y"}, {Label: "No"}}}
	q, timeout, err := BuildQuestion(req, AskDefaults{}, false)
	require.NoError(t, err)
	require.Len(t, q.Questions, 1)
	assert.Equal(t, "Deploy?", q.Questions[0].Question)
	assert.Equal(t, "y", q.Questions[0].Options[0].Value)
	assert.Equal(t, "No", q.Questions[0].Options[1].Value, "value defaults to label")
	assert.Equal(t, DefaultTimeout, timeout)
	assert.Equal(t, KindQuestion, q.Kind)
}

func TestEveryValidationLimitNamesItsField(t *testing.T) {
	long := strings.Repeat("x", 13)
	five := opts("a", "b", "c", "d", "e")
	dur := func(d time.Duration) *Duration { x := Duration(d); return &x }
	cases := []struct {
		name  string
		req   AskRequest
		field string
	}{
		{"no items", AskRequest{}, "questions"},
		{"five items", AskRequest{Questions: []Item{{Question: "1"}, {Question: "2"}, {Question: "3"}, {Question: "4"}, {Question: "5"}}}, "questions"},
		{"empty text", AskRequest{Questions: []Item{{Question: " "}}}, "questions[0].question"},
		{"long header", AskRequest{Questions: []Item{{Question: "q", Header: long}}}, "questions[0].header"},
		{"one option", AskRequest{Questions: []Item{{Question: "q", Options: opts("a")}}}, "questions[0].options"},
		{"five options", AskRequest{Questions: []Item{{Question: "q", Options: five}}}, "questions[0].options"},
		{"duplicate labels", AskRequest{Questions: []Item{{Question: "q", Options: opts("Same", "same")}}}, "questions[0].options[1].label"},
		{"empty label", AskRequest{Questions: []Item{{Question: "q", Options: opts("a", "")}}}, "questions[0].options[1].label"},
		{"duplicate items", AskRequest{Questions: []Item{{Question: "q"}, {Question: "Q"}}}, "questions[1].question"},
		{"timeout too short", AskRequest{Question: "q", Timeout: dur(5 * time.Second)}, "timeout"},
		{"timeout too long", AskRequest{Question: "q", Timeout: dur(31 * 24 * time.Hour)}, "timeout"},
		{"target without channel", AskRequest{Question: "q", Targets: []Target{{Platform: "slack"}}}, "targets[0].channel"},
		{"bad responder", AskRequest{Question: "q", Responders: &Responders{Users: []string{"U0123"}}}, "responders.users[0]"},
		{"relative resume url", AskRequest{Question: "q", Resume: &ResumeRequest{URL: "/resume"}}, "resume.url"},
		{"bad kind", AskRequest{Question: "q", Kind: "poll"}, "kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := BuildQuestion(&c.req, AskDefaults{}, true)
			require.Error(t, err)
			e, ok := err.(*Error)
			require.True(t, ok)
			assert.Equal(t, EInvalid, e.Code)
			var fields []string
			for _, d := range e.Details {
				fields = append(fields, d.Field)
			}
			assert.Contains(t, fields, c.field)
		})
	}
}

func TestValidationListsEveryProblem(t *testing.T) {
	req := &AskRequest{Questions: []Item{
		{Question: "", Header: "far too long header"},
		{Question: "ok", Options: opts("only")},
	}}
	_, _, err := BuildQuestion(req, AskDefaults{}, false)
	e := err.(*Error)
	assert.Len(t, e.Details, 3, "%v", e.Details)
}

func TestWebhookModeNeedsSecret(t *testing.T) {
	req := &AskRequest{Question: "q", Resume: &ResumeRequest{URL: "https://runtime.example/resume"}}
	_, _, err := BuildQuestion(req, AskDefaults{}, false)
	require.Error(t, err)
	assert.Equal(t, "resume.url", err.(*Error).Details[0].Field)
	assert.Contains(t, err.Error(), "BRIDGE_WEBHOOK_SECRET")
	q, _, err := BuildQuestion(req, AskDefaults{}, true)
	require.NoError(t, err)
	assert.True(t, q.WebhookMode())
}

func TestSubagentRejected(t *testing.T) {
	_, _, err := BuildQuestion(&AskRequest{Question: "q", ParentRunID: "run-1"}, AskDefaults{}, false)
	assert.Equal(t, ESubagentNotAllowed, ErrorCode(err))
	assert.Equal(t, "only parent conversations can ask user questions", err.Error())
}

func TestTimeoutForms(t *testing.T) {
	for in, want := range map[string]time.Duration{`"30m"`: 30 * time.Minute, `1800`: 30 * time.Minute, `"90"`: 90 * time.Second, `"2d"`: 48 * time.Hour} {
		var d Duration
		require.NoError(t, json.Unmarshal([]byte(in), &d), in)
		assert.Equal(t, want, time.Duration(d), in)
	}
	var d Duration
	assert.Error(t, json.Unmarshal([]byte(`"soon"`), &d))
}

func TestDefaultsFromRoute(t *testing.T) {
	def := AskDefaults{Targets: []Target{{Platform: "slack", Channel: "C1"}}, Timeout: 30 * time.Minute,
		Responders: Responders{Groups: map[string][]string{"slack_usergroups": {"S1"}}}}
	q, timeout, err := BuildQuestion(&AskRequest{Question: "q"}, def, false)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, timeout)
	assert.Equal(t, "C1", q.Targets[0].Channel)
	assert.Equal(t, []string{"S1"}, q.Responders.Group("slack_usergroups"))
}

// TestAnOtherOptionIsRefused: a free-text "Other" is added by every
// surface, so an option that is one ("Other", "other…", "Something
// else") is refused on every path with the same words, naming the label.
func TestAnOtherOptionIsRefused(t *testing.T) {
	for _, label := range []string{"Other", "other…", " OTHER: ", "Other (please specify)", "Something else"} {
		for name, req := range map[string]AskRequest{
			"items":     {Questions: []Item{{Question: "Which database?", Header: "DB", Options: opts("Postgres", label)}}},
			"shorthand": {Question: "Which database?", Options: opts("Postgres", label)},
		} {
			_, _, err := BuildQuestion(&req, AskDefaults{}, false)
			var e *Error
			require.ErrorAs(t, err, &e, "%s %q", name, label)
			assert.Equal(t, EInvalid, e.Code)
			assert.Equal(t, []Detail{{Field: "questions[0].options[1].label", Problem: OtherOptionProblem}}, e.Details, "%s %q", name, label)
		}
	}
	assert.Equal(t, `remove the "Other" option; the person can always answer in their own words ("Other" is added automatically)`, OtherOptionProblem)
	for _, label := range []string{"Others", "Other region", "Another"} {
		req := AskRequest{Question: "Which one?", Options: opts("First", label)}
		_, _, err := BuildQuestion(&req, AskDefaults{}, false)
		assert.NoError(t, err, "%q is an ordinary label", label)
	}
}
