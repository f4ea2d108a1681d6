package slack

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestACapturedClickCountsOnce: a signed click replayed within the
// signature's window, after the person changed their vote, flips nothing:
// interactions are remembered by trigger_id across replicas.
func TestACapturedClickCountsOnce(t *testing.T) {
	e := newEnv(t)
	q := approvalOnTwoChannels(e)
	c1 := e.copyOn(q, "C1").MessageTS

	captured := formBody(e.clickPayload(alice, "C1", c1, "Approve", nil))
	ts, sig := Sign(testSecret, time.Now(), captured)
	send := func() int {
		req := httptest.NewRequest(http.MethodPost, "/slack/interactions", strings.NewReader(string(captured)))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
		rec := httptest.NewRecorder()
		e.mux.ServeHTTP(rec, req)
		return rec.Code
	}
	require.Equal(t, http.StatusOK, send())
	e.says("C1", c1, "Approve: 1 of 2 approvals — alice")
	e.click(alice, "C1", c1, "Reject", nil)
	e.says("C1", c1, "Reject: 1 of 2 approvals — alice")

	assert.Equal(t, http.StatusOK, send(), "the replay is acknowledged, so Slack would not retry it")
	time.Sleep(200 * time.Millisecond)
	vs := e.get(q).Votes
	require.Len(t, vs, 1)
	assert.Equal(t, "Reject", vs[0].Label, "the replay did not flip alice's vote back")
}

// TestAClickCountsOnlyFromTheQuestionsOwnCopy: a block_id naming a question
// on a message that is not one of its copies (another channel, another
// message) changes nothing, and the person is told so.
func TestAClickCountsOnlyFromTheQuestionsOwnCopy(t *testing.T) {
	e := newEnv(t)
	q := e.ask(authQuestion())
	c1 := e.copyOn(q, "C1").MessageTS
	p := e.clickPayload(alice, "C1", c1, "OAuth 2.0", nil)
	p["container"] = map[string]any{"type": "message", "channel_id": "C2", "message_ts": "1700000000.999999"}
	p["channel"] = map[string]any{"id": "C2"}
	e.interact(p)
	e.wait("the person is told", func() bool { return len(e.ephemeralsTo(alice)) > 0 })
	assert.Contains(t, e.ephemeralsTo(alice)[0], words.NotOurs().Text)
	assert.Equal(t, domain.StatusPending, e.get(q).Status)
}

// TestAgentTextCannotDisguiseALink: the context's Markdown links become
// their words followed by the real destination, never a masked <url|text>.
func TestAgentTextCannotDisguiseALink(t *testing.T) {
	e := newEnv(t)
	req := authQuestion()
	req.Context = "Runbook: [https://bridge.example/runbook](https://evil.example/b)"
	q := e.ask(req)
	m, ok := e.fake.Message("C1", e.copyOn(q, "C1").MessageTS)
	require.True(t, ok)
	blocks := m.Texts()
	assert.Contains(t, blocks, "https://bridge.example/runbook (<https://evil.example/b>)")
	assert.NotContains(t, blocks, "|https://bridge.example")
}

// TestAHostilePayloadIsRefused: a signed payload nested past the limit is
// refused before it is decoded.
func TestAHostilePayloadIsRefused(t *testing.T) {
	e := newEnv(t)
	rec := e.post("/slack/interactions", []byte(url.Values{"payload": {strings.Repeat("[", 100000)}}.Encode()), nil)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	rec = e.post("/slack/events", []byte(`{"type":"event_callback","event":`+strings.Repeat("{\"a\":", 100000)+`}`), nil)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
}
