package slack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Nothing the agent writes may ping or link from a message's top-level
// text either: it is what notifications and some clients show.
func TestFinalFallbackTextEscapesTheAgentsHeader(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.AgentName = "<!channel>"
	req.Questions[0].Header = "<!here>"
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	e.click(alice, "C1", ts, "OAuth 2.0", nil)
	e.final(q)
	m := e.edited(q)[0]
	assert.NotContains(t, m.Text, "<!here>", "the final update's text pings the channel")
	assert.Contains(t, m.Text, "&lt;!here&gt;")
	assert.Contains(t, m.Text, "Answered by")
	for _, c := range e.fake.Calls("") {
		if text := c.Params["text"]; text != "" {
			assert.NotRegexp(t, `<!(here|channel)`, text, c.Method)
		}
	}
}

func TestSubmitHintEscapesItemNames(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Targets = req.Targets[:1]
	req.Questions = []domain.Item{
		{Question: "<https://evil.example|click me>", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}},
		{Question: "<!here> anything else?"},
	}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS
	e.click(bob, "C1", ts, "Submit", nil)
	e.wait("hint", func() bool { return len(e.ephemeralsTo(bob)) == 1 })
	hint := e.ephemeralsTo(bob)[0]
	assert.Contains(t, hint, "Nothing was sent yet")
	assert.NotContains(t, hint, "<https://evil.example", "a clickable link in the hint")
	assert.NotContains(t, hint, "<!here>")
	assert.Contains(t, hint, "&lt;https://evil.example|click me&gt;")

	// The draft confirmation and the already-answered explanation too: Bob
	// presses Submit on the message as his screen still shows it (the
	// withdrawn copy, once re-rendered, has no Submit to press).
	stale := e.clickPayload(bob, "C1", ts, "Submit", nil)
	_, err := e.router.Cancel(context.Background(), q.ProjectID, q.ID, domain.CancelAgent, nil)
	require.NoError(t, err)
	e.interact(stale)
	e.wait("closed", func() bool { return len(e.ephemeralsTo(bob)) == 2 })
	for _, text := range e.ephemeralsTo(bob) {
		assert.NotContains(t, text, "<https://evil")
		assert.NotContains(t, text, "<!here>")
	}
}

// A reminder naming more people than Slack's text holds cuts between
// mentions, never inside one, and keeps its sentence.
func TestReminderNamingManyRespondersCutsBetweenMentions(t *testing.T) {
	var r domain.Responders
	for i := range 300 {
		r.Users = append(r.Users, fmt.Sprintf("slack:U%08d", i))
	}
	q := &domain.Question{Responders: r, ExpiresAt: time.Unix(3600, 0)}
	text := reminderText(q, time.Unix(0, 0))
	assert.LessOrEqual(t, textLen(text), maxFallbackText)
	assert.Regexp(t, `^(<@U\d{8}> )+and \d+ more Still waiting for an answer — expires in 1 h`, text)
}
