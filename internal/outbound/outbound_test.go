package outbound

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type seen struct {
	mu    sync.Mutex
	calls []string
	waits []time.Duration
}

func (s *seen) Call(platform, method, outcome string, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, platform+" "+method+" "+outcome)
}

func (s *seen) RetryAfter(platform string, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, wait)
}

// TestTransportClassifiesEveryCall: each status class, a 429's Retry-After
// (Discord's fractional seconds too), and a connection that fails.
func TestTransportClassifiesEveryCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/chat.postMessage":
		case "/api/chat.update":
			w.Header().Set("Retry-After", "2.5")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/api/chat.delete":
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	o := &seen{}
	c := &http.Client{Transport: Transport(nil, "slack", o, SlackMethod)}
	for _, m := range []string{"chat.postMessage", "chat.update", "chat.delete", "users.info"} {
		res, err := c.Post(srv.URL+"/api/"+m, "application/json", nil)
		require.NoError(t, err)
		res.Body.Close()
	}
	srv.Close()
	_, err := c.Post(srv.URL+"/api/chat.postMessage", "application/json", nil)
	require.Error(t, err)
	assert.Equal(t, []string{"slack chat.postMessage ok", "slack chat.update rate_limited", "slack chat.delete client_error",
		"slack users.info server_error", "slack chat.postMessage network"}, o.calls)
	assert.Equal(t, []time.Duration{2500 * time.Millisecond}, o.waits)
}

// TestMethodNamesCarryNoIdOrToken: Discord's paths hold snowflakes and
// interaction tokens, Slack's response_url a secret path; the metrics'
// method label keeps neither.
func TestMethodNamesCarryNoIdOrToken(t *testing.T) {
	token := "aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDEyMzQ1Njc4OTpBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWg"
	for path, want := range map[string]string{
		"/api/v10/channels/1234567890123/messages":                             "POST /api/v10/channels/{id}/messages",
		"/api/v10/interactions/1234567890123/" + token + "/callback":           "POST /api/v10/interactions/{id}/{id}/callback",
		"/api/v10/webhooks/987654321/" + token + "/messages/@original":         "POST /api/v10/webhooks/{id}/{id}/messages/@original",
		"/api/v10/channels/12/messages/34/reactions/%E2%9C%85/@me":             "POST /api/v10/channels/{id}/messages/{id}/reactions/{id}/@me",
		"/api/v10/webhooks/987654321/abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN": "POST /api/v10/webhooks/{id}/{id}",
	} {
		r := httptest.NewRequest("POST", "http://discord.test"+path, nil)
		got := PathMethod(r)
		assert.Equal(t, want, got)
		assert.NotContains(t, got, token)
	}
	r := httptest.NewRequest("POST", "https://hooks.slack.com/actions/T0001/1234/SECRETxyz", nil)
	assert.Equal(t, "response_url", SlackMethod(r))
	r = httptest.NewRequest("POST", "https://agent.example/resume?token=abc", nil)
	assert.Equal(t, "POST", HTTPMethod(r))
	assert.False(t, strings.Contains(PathMethod(httptest.NewRequest("GET", "http://x/a/"+strings.Repeat("b", 25), nil)), "bbbb"))
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	_, ok := RetryAfterOf(h, now)
	assert.False(t, ok)
	h.Set("Retry-After", "30")
	d, ok := RetryAfterOf(h, now)
	assert.True(t, ok)
	assert.Equal(t, 30*time.Second, d)
	h.Set("Retry-After", now.Add(time.Minute).Format(http.TimeFormat))
	d, ok = RetryAfterOf(h, now)
	assert.True(t, ok)
	assert.Equal(t, time.Minute, d)
	h.Set("Retry-After", "soon")
	_, ok = RetryAfterOf(h, now)
	assert.False(t, ok)
}

// TestLastSegmentMethodNeverCarriesTheToken: Telegram's token sits in the
// path; the method label is the Bot API method alone.
func TestLastSegmentMethodNeverCarriesTheToken(t *testing.T) {
	for path, want := range map[string]string{
		"/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage": "sendMessage",
		"/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/":            "POST",
		"/v2/enqueue": "enqueue",
		"/oncalls":    "oncalls",
		"/":           "POST",
	} {
		r, _ := http.NewRequest(http.MethodPost, "https://api.example.com"+path, nil)
		if got := LastSegmentMethod(r); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
