package hook_test

// A bridge whose default route posts to a fake Slack, and a person who
// reads the posted message and presses its buttons: signed block_actions
// and view_submission interactions built from the message's and the
// modal's own block and action ids, as Slack sends them.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/agent/bridgetest"
	"github.com/askbridge/askbridge/agent/client"
	"github.com/stretchr/testify/require"
)

const slackSecret = "hook-test-signing-secret"

// slackBridge is a bridge with the fake Slack's channel C1 as its default
// route, and the fake.
type slackBridge struct {
	srv  *bridgetest.Server
	c    *client.Client
	fake *fakeslack.Server
}

func serveSlack(t *testing.T) *slackBridge {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the bridge binary")
	}
	fake := fakeslack.New("C1")
	t.Cleanup(fake.Close)
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("routes:\n  - {name: dev, default: true, targets: [{platform: slack, channel: C1}]}\n"), 0o600))
	srv := bridgetest.Serve(t, "BRIDGE_CONFIG="+cfg, "SLACK_BOT_TOKEN="+fake.BotToken,
		"SLACK_SIGNING_SECRET="+slackSecret, "SLACK_API_URL="+fake.APIURL())
	return &slackBridge{srv: srv, c: client.New(srv.URL, "", "default"), fake: fake}
}

// holding returns the first message of C1 (from index from on) whose
// text names every one of words.
func (s *slackBridge) holding(from int, words ...string) (fakeslack.Message, bool) {
	msgs := s.fake.Messages("C1")
	for _, m := range msgs[min(from, len(msgs)):] {
		all := true
		for _, w := range words {
			all = all && strings.Contains(m.Texts(), w)
		}
		if all {
			return m, true
		}
	}
	return fakeslack.Message{}, false
}

// blocks of the message as it is now.
func (s *slackBridge) blocks(t *testing.T, ts string) []map[string]any {
	t.Helper()
	m, ok := s.fake.Message("C1", ts)
	require.True(t, ok, "message %s is gone", ts)
	var blocks []map[string]any
	require.NoError(t, json.Unmarshal(m.Blocks, &blocks))
	return blocks
}

// press clicks, as user U1, the button labelled label (a prefix) in the
// first actions block of message ts whose block id holds part.
func (s *slackBridge) press(t *testing.T, ts, part, label string) {
	t.Helper()
	for _, b := range s.blocks(t, ts) {
		bid, _ := b["block_id"].(string)
		if b["type"] != "actions" || !strings.Contains(bid, part) {
			continue
		}
		els, _ := b["elements"].([]any)
		for _, ev := range els {
			el, _ := ev.(map[string]any)
			tx, _ := el["text"].(map[string]any)
			if text, _ := tx["text"].(string); strings.HasPrefix(text, label) {
				act := map[string]any{"action_id": el["action_id"], "block_id": bid, "type": el["type"],
					"value": el["value"], "text": tx, "action_ts": "1.1"}
				s.interact(t, map[string]any{"type": "block_actions", "trigger_id": s.fake.Trigger(),
					"user":      map[string]any{"id": "U1", "username": "alice", "name": "alice"},
					"container": map[string]any{"type": "message", "channel_id": "C1", "message_ts": ts},
					"channel":   map[string]any{"id": "C1"}, "message": map[string]any{"ts": ts}, "actions": []any{act}})
				return
			}
		}
	}
	m, _ := s.fake.Message("C1", ts)
	t.Fatalf("no button %q in a block …%s… of the message: %s", label, part, m.Blocks)
}

// submit waits for the modal a press opened (the views.open after views
// views) and submits its input with text.
func (s *slackBridge) submit(t *testing.T, views int, text string) {
	t.Helper()
	var vs []fakeslack.View
	for deadline := time.Now().Add(5 * time.Second); len(vs) <= views && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		vs = s.fake.Views()
	}
	require.Greater(t, len(vs), views, "the button opened no modal")
	v := vs[len(vs)-1]
	var view struct {
		CallbackID      string           `json:"callback_id"`
		PrivateMetadata string           `json:"private_metadata"`
		Blocks          []map[string]any `json:"blocks"`
	}
	require.NoError(t, json.Unmarshal(v.View, &view))
	values := map[string]any{}
	for _, b := range view.Blocks {
		if b["type"] != "input" {
			continue
		}
		el, _ := b["element"].(map[string]any)
		values[b["block_id"].(string)] = map[string]any{el["action_id"].(string): map[string]any{"type": el["type"], "value": text}}
	}
	require.NotEmpty(t, values, "the modal has no input: %s", v.View)
	s.interact(t, map[string]any{"type": "view_submission",
		"user": map[string]any{"id": "U1", "username": "alice", "name": "alice"},
		"view": map[string]any{"id": v.ID, "callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata,
			"state": map[string]any{"values": values}}})
}

// interact posts payload to the bridge's /slack/interactions, signed.
func (s *slackBridge) interact(t *testing.T, payload map[string]any) {
	t.Helper()
	b, err := json.Marshal(payload)
	require.NoError(t, err)
	body := url.Values{"payload": {string(b)}}.Encode()
	req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/slack/interactions", strings.NewReader(body))
	require.NoError(t, err)
	stamp, sig := slack.Sign(slackSecret, time.Now(), []byte(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "the bridge refused the Slack interaction")
}

// shownAt is when the fake first received (chat.postMessage or
// chat.update), from its call number from on, blocks naming every one of
// words.
func (s *slackBridge) shownAt(from int, words ...string) (at time.Time, method string) {
	calls := s.fake.Calls("")
	for _, c := range calls[min(from, len(calls)):] {
		if c.Method != "chat.postMessage" && c.Method != "chat.update" || c.Error != "" {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(c.Params["blocks"], w)
		}
		if all {
			return c.At, c.Method
		}
	}
	return time.Time{}, ""
}
