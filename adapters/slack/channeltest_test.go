package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
)

// TestChannelConformance runs the suite every Channel adapter passes
// against the fake Slack.
func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.Env {
		fake := fakeslack.New("C1")
		t.Cleanup(fake.Close)
		rc.Store = newTestStore(t)
		router := lifecycle.NewRouter(rc)
		log, logs := channeltest.NewLog()
		a, err := New(Config{BotToken: fake.BotToken, SigningSecret: testSecret, APIURL: fake.APIURL()}, router, log)
		if err != nil {
			t.Fatal(err)
		}
		a.retry.base = 10 * time.Millisecond
		router.AddChannel(a)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = a.Close(ctx)
			_ = router.Close(ctx)
		})
		method := map[channeltest.Op]string{channeltest.OpPost: "chat.postMessage", channeltest.OpFinish: "chat.update"}
		return &channeltest.Env{
			Router: router, Channel: a, Target: domain.Target{Platform: "slack", Channel: "C1"}, Missing: "CGONE",
			Delete:    func(c domain.Target) { fake.Delete(c.Channel, c.MessageTS) },
			RateLimit: func(op channeltest.Op) { fake.RateLimit(method[op], 1) },
			Fail: func(op channeltest.Op, status, n int) {
				for range n {
					fake.Fail(method[op], status)
				}
			},
			Text: func(c domain.Target) string {
				m, ok := fake.Message(c.Channel, c.MessageTS)
				if !ok {
					t.Fatalf("no message %s on the fake", c.MessageTS)
				}
				return m.Text + "\n" + m.Texts()
			},
			Live: func(c domain.Target) bool {
				m, ok := fake.Message(c.Channel, c.MessageTS)
				return ok && strings.Contains(string(m.Blocks), `"action_id"`)
			},
			Unreachable: func() lifecycle.Channel {
				gone, err := New(Config{BotToken: fake.BotToken, SigningSecret: testSecret, APIURL: "http://127.0.0.1:1/api/"}, router, log)
				if err != nil {
					t.Fatal(err)
				}
				gone.retry.base = 10 * time.Millisecond
				return gone
			},
			Count:   func(c domain.Target) int { return len(fake.Messages(c.Channel)) },
			Secrets: []string{fake.BotToken, testSecret},
			Logs:    logs,
		}
	})
}
