package discord

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestHugeBatchStaysWithinDiscordLimits: a batch of 300 calls is still one
// message Discord takes (5 rows, an embed of 4,096/6,000 characters), with
// as many calls as fit, how many more there are, and the batch page's link.
func TestHugeBatchStaysWithinDiscordLimits(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), func(_ *lifecycle.RouterConfig, c *Config) { c.PublicURL = batchPublicURL })
	b := channeltest.HugeBatch(300, e.ad.now())
	m := e.ad.renderBatch(b)
	em := m.Embeds[0]
	total := utf8.RuneCountInString(em.Title) + utf8.RuneCountInString(em.Description) + utf8.RuneCountInString(em.Footer.Text)
	if len(m.Components) > maxRows || utf8.RuneCountInString(em.Description) > maxEmbedDesc || total > maxEmbedTotal {
		t.Fatalf("%d rows, %d characters of description, %d in all: more than Discord takes", len(m.Components), utf8.RuneCountInString(em.Description), total)
	}
	for _, want := range []string{"Bash: rm -rf build1 xxxxxxxx", "more calls", batchPublicURL + "/batches/" + b.ID} {
		if !strings.Contains(em.Description, want) {
			t.Errorf("the message does not say %q:\n%s", want, em.Description)
		}
	}
}
