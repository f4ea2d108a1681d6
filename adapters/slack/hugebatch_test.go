package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestHugeBatchStaysWithinSlackLimits: a batch of 300 calls is still one
// message Slack takes (50 blocks, its text limit), with as many calls as
// fit, how many more there are, and the batch page's link.
func TestHugeBatchStaysWithinSlackLimits(t *testing.T) {
	e := newEnv(t, func(c *Config, _ *lifecycle.RouterConfig) { c.PublicURL = batchPublicURL })
	b := channeltest.HugeBatch(300, e.clock.Now())
	blocks, _ := e.a.renderBatch(b, e.clock.Now())
	if len(blocks) > maxBlocksMessage || blocksText(blocks) > maxBlocksText {
		t.Fatalf("%d blocks, %d characters: more than Slack takes", len(blocks), blocksText(blocks))
	}
	raw, _ := json.Marshal(blocks)
	for _, want := range []string{"Bash: rm -rf build1 xxxxxxxx", "more calls", batchPublicURL + "/batches/" + b.ID, "Allow all 300"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the message does not say %q", want)
		}
	}
}
