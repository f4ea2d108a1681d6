package discord

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// TestChannelConformance runs the suite every Channel adapter passes
// against the fake Discord.
func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.Env {
		f := fakediscord.New(t)
		rc.Store = newTestStore(t)
		router := lifecycle.NewRouter(rc)
		log, logs := channeltest.NewLog()
		a, err := New(Config{BotToken: f.BotToken, ApplicationID: f.AppID, PublicKey: f.PublicKey(), APIURL: f.APIURL(),
			RetryBackoff: 10 * time.Millisecond}, router, log)
		if err != nil {
			t.Fatal(err)
		}
		router.AddChannel(a)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = a.Close(ctx)
			_ = router.Close(ctx)
		})
		op := map[channeltest.Op]string{channeltest.OpPost: "post", channeltest.OpFinish: "edit"}
		return &channeltest.Env{
			Router: router, Channel: a, Target: domain.Target{Platform: "discord", Channel: "1000"}, Missing: "31337",
			Delete:    func(c domain.Target) { f.Forget(c.MessageTS) },
			RateLimit: func(o channeltest.Op) { f.Fail(op[o], http.StatusTooManyRequests) },
			Fail: func(o channeltest.Op, status, n int) {
				for range n {
					f.Fail(op[o], status)
				}
			},
			Text: func(c domain.Target) string {
				m := f.Message(c.MessageTS)
				parts := []string{m.Content}
				for _, e := range m.Embeds {
					parts = append(parts, e.Title, e.Description)
					for _, fl := range e.Fields {
						parts = append(parts, fl.Name, fl.Value)
					}
					if e.Footer != nil {
						parts = append(parts, e.Footer.Text)
					}
				}
				return strings.Join(parts, "\n")
			},
			Live: func(c domain.Target) bool {
				for _, row := range f.Message(c.MessageTS).Components {
					for _, el := range row.Components {
						if !el.Disabled {
							return true
						}
					}
				}
				return false
			},
			Unreachable: func() lifecycle.Channel {
				gone, err := New(Config{BotToken: f.BotToken, ApplicationID: f.AppID, PublicKey: f.PublicKey(),
					APIURL: "http://127.0.0.1:1/api/v10", RetryBackoff: 10 * time.Millisecond}, router, log)
				if err != nil {
					t.Fatal(err)
				}
				return gone
			},
			Count:   func(c domain.Target) int { return len(f.Messages(c.Channel)) },
			Secrets: []string{f.BotToken},
			Logs:    logs,
		}
	})
}
