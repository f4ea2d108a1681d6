package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTelegramNeverMeetsThePerAddressBound: the bridge sets the webhook's
// max_connections below its bound on requests in flight from one address,
// so a burst of button presses, each held while its answer is recorded,
// waits its turn at Telegram and none is refused with 429 (the bench's
// Telegram driver, which sent 200 presses/s with no such limit, met 429).
// It fails if telegram.WebhookMaxConnections and unauthenticatedPerIP
// drift apart.
func TestTelegramNeverMeetsThePerAddressBound(t *testing.T) {
	fake := faketelegram.New(t)
	require.NoError(t, telegram.SetWebhook(context.Background(), telegram.Config{Token: fake.Token, APIURL: fake.URL(),
		WebhookSecret: "webhook-secret-0123456789"}, "https://bridge.example/telegram/webhook"))
	assert.Less(t, fake.MaxConnections(), unauthenticatedPerIP, "Telegram's connections against the bridge's bound per address")

	var mu sync.Mutex
	inFlight, most := 0, 0
	bridge := httptest.NewServer(boundUnauthenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // the answer being recorded
		mu.Lock()
		inFlight--
		mu.Unlock()
	}), unauthenticatedPerIP))
	defer bridge.Close()

	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 2 * unauthenticatedPerIP {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := fake.Deliver(context.Background(), bridge.URL, []byte(`{"update_id":1}`))
			assert.NoError(t, err)
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, map[int]int{http.StatusOK: 2 * unauthenticatedPerIP}, codes, "every press answered, none refused")
	assert.LessOrEqual(t, most, telegram.WebhookMaxConnections, "presses in flight at once")
}
