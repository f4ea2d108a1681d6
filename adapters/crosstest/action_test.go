package crosstest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLongApprovalLinksToItsQuestionPageOnEveryChat: a bridge configured
// with public_url (as `askbridge serve` builds it) posts an Edit approval
// whose 300-line diff cannot fit a chat message; both the Slack and the
// Discord copy say so and link to the question page under public_url,
// within the limits the fakes enforce.
func TestLongApprovalLinksToItsQuestionPageOnEveryChat(t *testing.T) {
	fs := fakeslack.New("C1")
	t.Cleanup(fs.Close)
	fd := fakediscord.New(t)
	b := newApp(t, app.Settings{
		PublicURL: "https://bridge.example.com",
		Slack:     slack.Config{BotToken: fs.BotToken, SigningSecret: slackSecret, APIURL: fs.APIURL()},
		Discord:   discord.Config{BotToken: fd.BotToken, ApplicationID: fd.AppID, PublicKey: fd.PublicKey(), APIURL: fd.APIURL()},
	})
	fd.Target = b.srv.URL + "/discord/interactions"

	var old, new []string
	for i := range 300 {
		old = append(old, fmt.Sprintf("\tlegacyCall(%d) // the old way of doing step %d", i, i))
		new = append(new, fmt.Sprintf("\tmodernCall(%d, opts) // step %d, the new way", i, i))
	}
	input, _ := json.Marshal(map[string]any{"file_path": "/home/dev/proj/main.go",
		"old_string": strings.Join(old, "\n"), "new_string": strings.Join(new, "\n")})
	res, err := b.app.Router().Ask(context.Background(), "ops", &domain.AskRequest{RunID: "run-1", AgentID: "claude",
		Question: "Allow Edit of main.go?", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}},
		Action:  &domain.Action{Tool: "Edit", Input: input},
		Targets: []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "1000"}}}, "")
	require.NoError(t, err)
	q := res.Question
	link := "https://bridge.example.com/questions/" + q.ID
	for _, tg := range q.Targets {
		require.Empty(t, tg.Error, tg.Platform)
		switch tg.Platform {
		case "slack":
			m, ok := fs.Message("C1", tg.MessageTS)
			require.True(t, ok)
			all := string(m.Blocks) + m.Text
			assert.Contains(t, all, link, "the Slack copy links to the whole action")
			assert.Contains(t, m.Texts(), "Not all shown here", "and says it is cut")
		case "discord":
			m := fd.Message(tg.MessageTS)
			require.NotNil(t, m)
			raw, _ := json.Marshal(m)
			assert.Contains(t, string(raw), link, "the Discord copy links to the whole action")
			assert.Contains(t, string(raw), " shown", "and says how much it shows")
		}
	}
	assert.Empty(t, fd.Violations(), "within Discord's limits")
}
