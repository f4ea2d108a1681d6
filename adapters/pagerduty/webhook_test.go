package pagerduty_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/pagerduty"
	"github.com/askbridge/askbridge/adapters/pagerduty/fakepd"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type incidents struct {
	mu   sync.Mutex
	seen []string
}

func (i *incidents) record(kind, id, by string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if id == "unknown" {
		return domain.Errorf(domain.ENotFound, "no such question")
	}
	i.seen = append(i.seen, kind+" "+id+" by "+by)
	return nil
}

func (i *incidents) PageAcknowledged(_ context.Context, id, _, by string, _ time.Time) error {
	return i.record("ack", id, by)
}
func (i *incidents) PageResolved(_ context.Context, id, _, by string, _ time.Time) error {
	return i.record("resolved", id, by)
}

func (i *incidents) got() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]string(nil), i.seen...)
}

const (
	secret    = "whsec-current"
	oldSecret = "whsec-previous"
)

func webhookServer(t *testing.T, secrets ...string) (*httptest.Server, *incidents) {
	inc := &incidents{}
	srv := httptest.NewServer(pagerduty.NewWebhook(pagerduty.WebhookConfig{Secrets: secrets, Incidents: inc}))
	t.Cleanup(srv.Close)
	return srv, inc
}

func TestWebhookSignatures(t *testing.T) {
	srv, inc := webhookServer(t, secret)
	post := func(secrets ...string) int {
		resp, err := fakepd.Webhook(srv.URL, secrets, "incident.acknowledged", "q-1", "Ana")
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, post(), "unsigned")
	assert.Equal(t, http.StatusUnauthorized, post("guessed"), "forged")
	assert.Empty(t, inc.got(), "nothing unsigned or forged is acted on")
	assert.Equal(t, http.StatusNoContent, post(secret))
	assert.Equal(t, http.StatusNoContent, post("rotated-new", secret), "several signatures while PagerDuty rotates its secret")
	assert.Equal(t, []string{"ack q-1 by Ana", "ack q-1 by Ana"}, inc.got())

	// A body changed after signing (or a signature replayed on another body).
	body := []byte(`{"event":{"event_type":"incident.acknowledged","resource_type":"incident","data":{"incident_key":"q-1"}}}`)
	sig := pagerduty.Sign(secret, body)
	other := bytes.Replace(body, []byte("q-1"), []byte("q-2"), 1)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(other))
	req.Header.Set("X-PagerDuty-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Len(t, inc.got(), 2)
}

// The bridge's side of a rotation: the old and new secret both verify.
func TestWebhookTakesEitherConfiguredSecret(t *testing.T) {
	srv, inc := webhookServer(t, secret, oldSecret)
	resp, err := fakepd.Webhook(srv.URL, []string{oldSecret}, "incident.resolved", "q-9", "Bruno")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, []string{"resolved q-9 by Bruno"}, inc.got())
}

func TestWebhookIgnoresWhatIsNotOurs(t *testing.T) {
	srv, inc := webhookServer(t, secret)
	for _, c := range []struct{ event, key string }{
		{"incident.triggered", "q-1"}, {"incident.acknowledged", ""}, {"incident.acknowledged", "unknown"},
	} {
		resp, err := fakepd.Webhook(srv.URL, []string{secret}, c.event, c.key, "Ana")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNoContent, resp.StatusCode, "%+v: answered 2xx so PagerDuty does not retry", c)
	}
	assert.Empty(t, inc.got())

	body := []byte(`not json`)
	resp, err := fakepd.PostSigned(srv.URL, []string{secret}, body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	resp, err = http.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func FuzzWebhook(f *testing.F) {
	f.Add([]byte(`{"event":{"event_type":"incident.acknowledged","resource_type":"incident","agent":{"summary":"Ana"},"data":{"incident_key":"q-1"}}}`), true)
	f.Add([]byte(`{"event":{"event_type":"incident.resolved","resource_type":"incident","data":{"incident_key":"unknown"}}}`), true)
	f.Add([]byte(`{"event":null}`), true)
	f.Add([]byte(`{`), false)
	h := pagerduty.NewWebhook(pagerduty.WebhookConfig{Secrets: []string{secret}, Incidents: &incidents{}})
	f.Fuzz(func(t *testing.T, body []byte, signed bool) {
		req := httptest.NewRequest(http.MethodPost, pagerduty.WebhookPath, bytes.NewReader(body))
		if signed {
			req.Header.Set("X-PagerDuty-Signature", pagerduty.Sign(secret, body))
		} else {
			req.Header.Set("X-PagerDuty-Signature", "v1=00")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !signed && rec.Code != http.StatusUnauthorized {
			t.Fatalf("unsigned body answered %d", rec.Code)
		}
		if signed && rec.Code != http.StatusNoContent && rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("signed body answered %d", rec.Code)
		}
	})
}
