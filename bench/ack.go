package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/storetest"
)

// benchAck: (a) interaction acknowledgement latency: signed Slack
// block_actions clicks on posted questions arrive at the click rate; each
// latency is the HTTP round trip of the click, next to a bare HTTP round
// trip at the same rate.
func benchAck(rs *storetest.Server, o opts, floor lat) error {
	fake := fakeslack.New("C1", "C2", "C3", "C4")
	defer fake.Close()
	r, err := newReplica(rs.URL, fake)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx := context.Background()
	n := o.rate * min(o.secs, 10)
	bodies := make([][]byte, n)
	chans := []string{"C1", "C2", "C3", "C4"}
	for i := range n {
		ch := chans[i%len(chans)]
		res, err := r.router.Ask(ctx, "ack", &domain.AskRequest{RunID: fmt.Sprint("run-", i), Question: "Ship it?",
			Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Targets: []domain.Target{{Platform: "slack", Channel: ch}}}, "")
		if err != nil {
			return err
		}
		var ts string
		for _, t := range res.Question.Targets {
			ts = t.MessageTS
		}
		m, ok := fake.Message(ch, ts)
		if !ok {
			return fmt.Errorf("question %d was not posted", i)
		}
		actionID, blockID, value := findButton(m.Blocks, "Yes")
		if actionID == "" {
			return fmt.Errorf("no Yes button in %s", m.Blocks)
		}
		p := map[string]any{"type": "block_actions", "trigger_id": fake.Trigger(),
			"user":      map[string]any{"id": "U1", "username": "alice", "name": "alice"},
			"container": map[string]any{"type": "message", "channel_id": ch, "message_ts": ts},
			"channel":   map[string]any{"id": ch},
			"actions":   []any{map[string]any{"action_id": actionID, "block_id": blockID, "type": "button", "value": value, "action_ts": "1.1"}}}
		b, _ := json.Marshal(p)
		bodies[i] = []byte(url.Values{"payload": {string(b)}}.Encode())
	}
	c := client(512)
	ls, _, err := openLoop(o.rate, time.Duration(n/o.rate)*time.Second, func(i int) (time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/slack/interactions", bytes.NewReader(bodies[i]))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		ts, sig := slack.Sign(signingSecret, time.Now(), bodies[i])
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
		t := time.Now()
		res, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return 0, fmt.Errorf("click answered %d", res.StatusCode)
		}
		return time.Since(t), nil
	})
	if err != nil {
		return err
	}
	p := percentiles(ls)
	answered := 0
	storetest.WaitFor(ctx, 30*time.Second, func() bool {
		qs, _ := r.app.Store().List(ctx, "ack", domain.StatusAnswered, n+10)
		answered = len(qs)
		return answered == n
	})
	fmt.Printf("(a) Slack click acknowledgement, %d signed clicks at %d/s: p50 %s  p99 %s  max %s; floor (bare HTTP) p99 %s; ratio p99 %s; %d/%d answers recorded; target p99 < 25 ms: %s\n\n",
		n, o.rate, ms(p.p50), ms(p.p99), ms(p.max), ms(floor.p99), ratio(p.p99, floor.p99), answered, n, verdict(p.p99 < 25*time.Millisecond))
	return nil
}

// findButton finds a button by its text in Block Kit JSON.
func findButton(blocks json.RawMessage, text string) (actionID, blockID, value string) {
	var bs []map[string]any
	json.Unmarshal(blocks, &bs)
	for _, b := range bs {
		els, _ := b["elements"].([]any)
		if acc, ok := b["accessory"].(map[string]any); ok {
			els = append(els, acc)
		}
		for _, e := range els {
			el, _ := e.(map[string]any)
			t, _ := el["text"].(map[string]any)
			if el["type"] == "button" && t != nil && t["text"] == text {
				a, _ := el["action_id"].(string)
				bid, _ := b["block_id"].(string)
				v, _ := el["value"].(string)
				return a, bid, v
			}
		}
	}
	return "", "", ""
}
