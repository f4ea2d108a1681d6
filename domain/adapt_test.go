package domain

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// details returns the field → problem of a validation error.
func details(t *testing.T, err error) map[string]string {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "want a domain error, got %v", err)
	out := map[string]string{}
	for _, d := range e.Details {
		out[d.Field] = d.Problem
	}
	return out
}

func ask(t *testing.T, body string) (*Question, error) {
	t.Helper()
	var req AskRequest
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	q, _, err := BuildQuestion(&req, AskDefaults{Timeout: DefaultTimeout}, false)
	return q, err
}

const authAsk = `{"questions":[
 {"question":"Which auth?","header":"Auth","multiSelect":false,"options":[{"label":"API key"},{"label":"OAuth"}]},
 {"question":"Key name?","multiSelect":false,"options":[],"show_if":{"item":0,"any_of":["API key"]},
  "other":{"pattern":"[A-Z]+-[0-9]+","hint":"a ticket id like OPS-123"}},
 {"question":"Scopes?","multiSelect":true,"options":[{"label":"read"},{"label":"write"}],"show_if":{"item":0,"none_of":["API key"]}}]}`

func TestConditionsRefusedAtAskTimeNameTheField(t *testing.T) {
	cases := []struct{ name, body, field, says string }{
		{"forward", `{"questions":[{"question":"A?","options":[{"label":"x"},{"label":"y"}],"show_if":{"item":1,"any_of":["x"]}},{"question":"B?","options":[{"label":"x"},{"label":"y"}]}]}`,
			"questions[0].show_if.item", "points forward"},
		{"itself", `{"questions":[{"question":"A?","options":[{"label":"x"},{"label":"y"}]},{"question":"B?","options":[{"label":"x"},{"label":"y"}],"show_if":{"item":1,"any_of":["x"]}}]}`,
			"questions[1].show_if.item", "itself"},
		{"unknown label", `{"questions":[{"question":"A?","options":[{"label":"x"},{"label":"y"}]},{"question":"B?","options":[],"show_if":{"item":0,"any_of":["z"]}}]}`,
			"questions[1].show_if.any_of[0]", `"z" is not an option of questions[0]`},
		{"open-ended", `{"questions":[{"question":"A?","options":[]},{"question":"B?","options":[],"show_if":{"item":0,"none_of":["z"]}}]}`,
			"questions[1].show_if.item", "open-ended"},
		{"no labels", `{"questions":[{"question":"A?","options":[{"label":"x"},{"label":"y"}]},{"question":"B?","options":[],"show_if":{"item":0}}]}`,
			"questions[1].show_if", "any_of or none_of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ask(t, c.body)
			require.Error(t, err)
			require.Contains(t, details(t, err)[c.field], c.says)
		})
	}
}

func TestConditionalAnswersListSkippedAndRefuseHiddenOrMissing(t *testing.T) {
	q, err := ask(t, authAsk)
	require.NoError(t, err)

	a, err := ParseAnswer(q, RespondRequest{Answers: map[string]StringList{"Which auth?": {"api key"}, "Key name?": {"OPS-12"}}})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"Which auth?": "API key", "Key name?": "OPS-12"}, a.Answers)
	require.NotContains(t, a.Answers, "Scopes?", "a hidden item is no key of answers")
	require.NotContains(t, a.Selections, "Scopes?")
	require.Len(t, a.Skipped, 1)
	require.Equal(t, "Scopes?", a.Skipped[0].Question)
	require.Contains(t, a.Skipped[0].Reason, "“Auth” is not API key")
	require.Equal(t, "API key; OPS-12", a.Response)

	// The hidden item filled: refused, naming it.
	_, err = ParseAnswer(q, RespondRequest{Answers: map[string]StringList{"Which auth?": {"API key"}, "Key name?": {"OPS-1"}, "Scopes?": {"read"}}})
	require.Contains(t, details(t, err)["answers[Scopes?]"], "not asked")
	// The shown item left out: refused, naming it.
	_, err = ParseAnswer(q, RespondRequest{Answers: map[string]StringList{"Which auth?": {"OAuth"}}})
	require.Contains(t, details(t, err)["answers[Scopes?]"], "required")

	a, err = ParseAnswer(q, RespondRequest{Answers: map[string]StringList{"Which auth?": {"OAuth"}, "Scopes?": {"read", "write"}}})
	require.NoError(t, err)
	require.Equal(t, []string{"read", "write"}, a.Selections["Scopes?"])
	require.Equal(t, "Key name?", a.Skipped[0].Question)
}

func TestFreeTextRulesRefuseWithHintAndRule(t *testing.T) {
	min, max := 1.0, 10.0
	q := &Question{Questions: []Item{{Question: "How many?", Other: &FreeTextRules{Number: &NumberRule{Min: &min, Max: &max, Integer: true}, Hint: "replicas"}}}}
	cases := []struct{ in, says string }{
		{"abc", "is not a number; expected replicas"},
		{"2.5", "not a whole number"},
		{"0", "below the least allowed, 1"},
		{"11", "above the most allowed, 10"},
	}
	for _, c := range cases {
		_, err := ParseAnswer(q, RespondRequest{Response: &c.in})
		require.Contains(t, details(t, err)["answers[How many?]"], c.says, c.in)
	}
	ok := " 7 "
	a, err := ParseAnswer(q, RespondRequest{Response: &ok})
	require.NoError(t, err)
	require.Equal(t, "7", a.Answers["How many?"])

	q = &Question{Questions: []Item{{Question: "Ticket?", Options: []Option{{Label: "None", Value: "None"}, {Label: "Later", Value: "Later"}},
		Other: &FreeTextRules{Pattern: `OPS-\d+`, MinLength: 5, MaxLength: 9, Hint: "a ticket id like OPS-123"}}}}
	for in, says := range map[string]string{
		"OPS-1x":     `"OPS-1x" does not match the pattern OPS-\d+; expected a ticket id like OPS-123`,
		"OPS":        "too short: at least 5 characters",
		"OPS-123456": "too long: at most 9 characters",
		"xOPS-12":    "does not match", // the pattern is anchored
	} {
		_, err := ParseAnswer(q, RespondRequest{Response: &in})
		require.Contains(t, details(t, err)["answers[Ticket?]"], says, in)
	}
	for _, in := range []string{"OPS-12", "later"} { // an option is no free text: the rules do not apply
		_, err := ParseAnswer(q, RespondRequest{Response: &in})
		require.NoError(t, err, in)
	}
}

func TestRulesRefusedAtAskTime(t *testing.T) {
	long := strings.Repeat("a", MaxPatternLen+1)
	_, err := ask(t, `{"question":"T?","options":[],"other":{"pattern":"`+long+`"}}`)
	require.Contains(t, details(t, err)["questions[0].other.pattern"], "at most 1000")
	_, err = ask(t, `{"question":"T?","options":[],"other":{"pattern":"(a"}}`)
	require.Contains(t, details(t, err)["questions[0].other.pattern"], "not a valid RE2")
	_, err = ask(t, `{"question":"T?","options":[],"other":{"min_length":5,"max_length":2}}`)
	require.Contains(t, details(t, err)["questions[0].other.min_length"], "more than max_length")
	_, err = ask(t, `{"question":"T?","options":[],"other":{"number":{"min":5,"max":2}}}`)
	require.Contains(t, details(t, err)["questions[0].other.number.min"], "more than number.max")
}

func TestDefaultsAndUseDefaultsOnTimeout(t *testing.T) {
	_, err := ask(t, `{"question":"Env?","options":[{"label":"dev","default":true},{"label":"prod","default":true}]}`)
	require.Contains(t, details(t, err)["questions[0].options"], "single-select question takes one default")

	_, err = ask(t, `{"question":"Env?","options":[{"label":"dev"},{"label":"prod"}],"on_timeout":{"use_defaults":true}}`)
	require.Contains(t, details(t, err)["on_timeout.use_defaults"], "no option is marked default")

	// The item shown under the defaults has none: refused, naming it.
	_, err = ask(t, `{"questions":[{"question":"Env?","options":[{"label":"dev","default":true},{"label":"prod"}]},
	 {"question":"Region?","options":[{"label":"eu"},{"label":"us"}],"show_if":{"item":0,"any_of":["dev"]}}],"on_timeout":{"use_defaults":true}}`)
	require.Contains(t, details(t, err)["questions[1].options"], "no option is marked default")

	q, err := ask(t, `{"questions":[{"question":"Env?","options":[{"label":"dev","default":true},{"label":"prod"}]},
	 {"question":"Region?","options":[{"label":"eu"},{"label":"us"}],"show_if":{"item":0,"any_of":["prod"]}},
	 {"question":"Checks?","multiSelect":true,"options":[{"label":"lint","default":true},{"label":"test","default":true},{"label":"fuzz"}]}],
	 "on_timeout":{"use_defaults":true}}`)
	require.NoError(t, err)
	req, ok := DefaultsRequest(q.Questions)
	require.True(t, ok)
	a, err := ParseAnswer(q, req)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"Env?": "dev", "Checks?": "lint, test"}, a.Answers)
	require.Equal(t, "Region?", a.Skipped[0].Question)
	q.Status, q.Answers = StatusAnswered, a.Answers
	require.Equal(t, "Env?: dev; Checks?: lint, test", AnswerLine(q), "an item not asked is left out of the outcome")
}

func TestDefaultsSummaryAndImageHosts(t *testing.T) {
	q, err := ask(t, `{"questions":[{"question":"Env?","header":"Env","options":[{"label":"dev","default":true},{"label":"prod"}]},
	 {"question":"Region?","options":[{"label":"eu"},{"label":"us"}],"show_if":{"item":0,"any_of":["prod"]}},
	 {"question":"Checks?","multiSelect":true,"options":[{"label":"lint","default":true},{"label":"test","default":true},{"label":"fuzz"}]}]}`)
	require.NoError(t, err)
	require.Equal(t, "Env: dev; Checks?: lint, test", DefaultsSummary(q.Questions))
	q.Questions[2].Options[0].Default, q.Questions[2].Options[1].Default = false, false
	require.Equal(t, "", DefaultsSummary(q.Questions), "an item asked under the defaults has none")

	hosts := []string{"img.example.com", "*.cdn.example.com"}
	for url, want := range map[string]bool{
		"https://img.example.com/a.png": true, "https://IMG.example.com/a.png": true, "https://x.cdn.example.com/a.png": true,
		"https://cdn.example.com/a.png": false, "https://img.example.com.evil.test/a.png": false, "https://evil.test/img.example.com": false,
		"http://img.example.com/a.png": false,
	} {
		require.Equal(t, want, (&Image{URL: url, Alt: "a"}).AllowedBy(hosts), url)
	}
	require.False(t, (*Image)(nil).AllowedBy(hosts))
}

func TestImagesRefusedNamingTheField(t *testing.T) {
	cases := map[string]struct{ img, field, says string }{
		"http":    {`{"url":"http://x.example/a.png","alt":"a"}`, ".url", "https"},
		"data":    {`{"url":"data:image/png;base64,AAAA","alt":"a"}`, ".url", "https"},
		"no alt":  {`{"url":"https://x.example/a.png","alt":" "}`, ".alt", "required"},
		"too big": {`{"url":"https://x.example/` + strings.Repeat("a", 3000) + `","alt":"a"}`, ".url", "3000"},
		"alt big": {`{"url":"https://x.example/a.png","alt":"` + strings.Repeat("a", 2001) + `"}`, ".alt", "2000"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ask(t, `{"question":"Which?","image":`+c.img+`,"options":[{"label":"a","image":`+c.img+`},{"label":"b"}],"context":"c","context_image":`+c.img+`}`)
			d := details(t, err)
			for _, f := range []string{"questions[0].image", "questions[0].options[0].image", "context_image"} {
				require.Contains(t, d[f+c.field], c.says, f)
			}
		})
	}
	q, err := ask(t, `{"question":"Which?","image":{"url":"https://img.example/a.png","alt":"the chart"},"options":[{"label":"a"},{"label":"b"}]}`)
	require.NoError(t, err)
	require.Equal(t, "img.example", q.Questions[0].Image.ImageHost())
}

func TestShapeUnchangedForCallersThatSendNone(t *testing.T) {
	q, err := ask(t, `{"question":"Go?","options":[{"label":"Yes"},{"label":"No"}]}`)
	require.NoError(t, err)
	b, err := json.Marshal(q.Questions)
	require.NoError(t, err)
	require.JSONEq(t, `[{"question":"Go?","multiSelect":false,"options":[{"label":"Yes","value":"Yes"},{"label":"No","value":"No"}]}]`, string(b))
}

func TestHistoryTextAndSuggestion(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	items := []Item{{Question: "Auth?", Options: []Option{{Label: "API key"}, {Label: "OAuth"}}}}
	q := &Question{ID: "new", ProjectID: "p", AgentID: "bot", Questions: items}
	past := func(id, agent, label, who string, ago time.Duration) *Question {
		at := now.Add(-ago)
		return &Question{ID: id, ProjectID: "p", AgentID: agent, Status: StatusAnswered, Questions: items,
			Answers: map[string]string{"Auth?": label}, Selections: map[string][]string{"Auth?": {label}},
			RespondedBy: &Person{Platform: "slack", ID: "U" + who, Name: who}, RespondedAt: &at}
	}
	day := 24 * time.Hour
	h := HistoryOf(q, []*Question{
		past("a", "bot", "OAuth", "maria", 21*day), past("b", "bot", "API key", "li", 8*day),
		past("c", "other", "OAuth", "x", day), past("d", "bot", "API key", "maria", 2*day),
		past("e", "bot", "OAuth", "old", 40*day),
	}, HistoryShown)
	require.Equal(t, "Last 3 times: API key (maria, 2 days ago), API key (li, last week), OAuth (maria, 3 weeks ago)", HistoryText(h, now))
	require.True(t, SuggestFromHistory(q, h))
	require.True(t, q.Questions[0].Options[0].Recommended)
}

// FuzzFreeTextRules: any rules that pass the ask's checks, against any
// answer, never panic, and an answer they accept keeps the length rules.
func FuzzFreeTextRules(f *testing.F) {
	f.Add(`OPS-\d+`, 2, 9, "OPS-12")
	f.Add(`(a|b)*c`, 0, 0, "ababc")
	f.Add(`[`, 1, 0, "x")
	f.Fuzz(func(t *testing.T, pattern string, minLen, maxLen int, answer string) {
		r := &FreeTextRules{Pattern: pattern, MinLength: minLen % 50, MaxLength: maxLen % 50}
		var p problems
		checkRules(&p, "other", r)
		if len(p) > 0 {
			return
		}
		if r.Check(answer) == "" {
			n := len([]rune(strings.TrimSpace(answer)))
			if n < r.MinLength || (r.MaxLength > 0 && n > r.MaxLength) {
				t.Fatalf("accepted %q against %+v", answer, r)
			}
		}
	})
}
