package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The trust model, probed from outside: every probe an attacker holding an
// ordinary credential (or a web page in a developer's browser) could try
// is a row below, sent to the built binary. A refused probe must name the
// rule and change nothing: the questions, votes, runs and audit trail of
// every project read the same before and after.

const secSlackSecret = "slack-signing-secret-for-tests"

// secConfig: project projA has agents agentA and agentA2, a plain operator
// opA and a relay operator relay; project projB has operator opB; admin
// sees everything (it only takes the snapshots). Route "gate" needs two
// approvals from slack:U1 and slack:U2.
const secConfig = `
webhooks: {secret: bridge-webhook-secret}
metrics: {token: metrics-token}
agents:
  - {id: agentA, project: projA, token: tok-agentA, tools: [ask_user], webhook_secret: agentA-secret}
  - {id: agentA2, project: projA, token: tok-agentA2, tools: [ask_user]}
operators:
  - {id: opA, projects: [projA], token: tok-opA}
  - {id: opB, projects: [projB], token: tok-opB}
  - {id: relay, projects: [projA], token: tok-relay, act_for: true}
  - {id: admin, projects: ["*"], token: tok-admin}
routes:
  - name: gate
    targets: [{platform: slack, channel: C1}, {platform: discord, channel: "1000"}]
    responders: {users: ["slack:U1", "slack:U2"], exclude_requester: true}
    approvals_required: 2
`

// req is one HTTP request of a probe.
type req struct {
	method, path, token string
	body                any               // JSON-encoded unless a string
	header              map[string]string // e.g. Content-Type, Origin, Host
}

func (p *proc) send(t *testing.T, r req) (int, string) {
	t.Helper()
	var rd io.Reader
	switch b := r.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	hr, err := http.NewRequest(r.method, p.URL+r.path, rd)
	require.NoError(t, err)
	if rd != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		if strings.EqualFold(k, "Host") {
			hr.Host = v
		} else {
			hr.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (p *proc) jsonOf(t *testing.T, r req) map[string]any {
	t.Helper()
	code, body := p.send(t, r)
	require.Less(t, code, 300, "%s %s: %s", r.method, r.path, body)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return out
}

// snapshot is everything a refused probe must leave as it was.
func (p *proc) snapshot(t *testing.T, runs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, proj := range []string{"projA", "projB"} {
		_, qs := p.send(t, req{method: "GET", path: "/api/projects/" + proj + "/agent-questions", token: "tok-admin"})
		_, audit := p.send(t, req{method: "GET", path: "/api/projects/" + proj + "/audit", token: "tok-admin"})
		b.WriteString(qs + audit)
	}
	for _, run := range runs {
		_, r := p.send(t, req{method: "GET", path: "/api/projects/projA/agent-runs/" + run, token: "tok-admin"})
		b.WriteString(r)
	}
	return b.String()
}

// refusedLine matches one "refused" entry of an audit trail's JSON (never
// the first: a question's trail starts with "asked").
var refusedLine = regexp.MustCompile(`,\{"id":"[^"]*","type":"refused"[^{}]*(\{[^{}]*\})?[^{}]*\}`)

// slackClick is a signed Slack click by user on the button labelled label
// of the copy in C1.
func slackClick(t *testing.T, fs *fakeslack.Server, user, label string) string {
	t.Helper()
	var m fakeslack.Message
	require.Eventually(t, func() bool {
		ms := fs.Messages("C1")
		if len(ms) == 0 {
			return false
		}
		m = ms[len(ms)-1]
		return true
	}, 5*time.Second, 10*time.Millisecond, "the question was never posted to Slack")
	var blocks []struct {
		BlockID  string           `json:"block_id"`
		Elements []map[string]any `json:"elements"`
	}
	require.NoError(t, json.Unmarshal(m.Blocks, &blocks))
	var action map[string]any
	for _, bl := range blocks {
		for _, el := range bl.Elements {
			if tx, ok := el["text"].(map[string]any); ok && tx["text"] == label {
				action = map[string]any{"action_id": el["action_id"], "block_id": bl.BlockID, "type": el["type"],
					"value": el["value"], "action_ts": "1.1"}
			}
		}
	}
	require.NotNil(t, action, "no button %q on the Slack copy", label)
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "trigger_id": fs.Trigger(),
		"user":      map[string]any{"id": user, "username": user, "name": user},
		"container": map[string]any{"type": "message", "channel_id": "C1", "message_ts": m.TS},
		"channel":   map[string]any{"id": "C1"}, "actions": []any{action}})
	return url.Values{"payload": {string(payload)}}.Encode()
}

func signedSlack(body, secret string) req {
	stamp, sig := slack.Sign(secret, time.Now(), []byte(body))
	return req{method: "POST", path: "/slack/interactions", body: body, header: map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": sig}}
}

func TestTrustModelProbes(t *testing.T) {
	fs := fakeslack.New("C1")
	defer fs.Close()
	cfg := filepath.Join(t.TempDir(), "bridge.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(secConfig), 0o600))
	fd := fakediscord.New(t)
	p := startBridge(t, "BRIDGE_CONFIG="+cfg, "SLACK_BOT_TOKEN="+fs.BotToken, "SLACK_SIGNING_SECRET="+secSlackSecret,
		"SLACK_API_URL="+fs.APIURL(), "DISCORD_BOT_TOKEN="+fd.BotToken, "DISCORD_APPLICATION_ID="+fd.AppID,
		"DISCORD_PUBLIC_KEY="+fd.PublicKey(), "DISCORD_API_URL="+fd.APIURL())
	fd.Target = p.URL + "/discord/interactions"

	// agentA's run, with a pending question carrying context only agentA
	// may read, asked with an idempotency key.
	qa := p.jsonOf(t, req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA", body: map[string]any{
		"run_id": "runA", "question": "Rotate the database password?", "context": "SECRET-CONTEXT-OF-AGENT-A",
		"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}, "idempotency_key": "toolu_A"}})
	qaID := qa["id"].(string)
	// The two-person gate (route gate: slack:U1 and slack:U2).
	gate := p.jsonOf(t, req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA", body: map[string]any{
		"run_id": "runGate", "route": "gate", "kind": "approval", "question": "Drop table users?",
		"options": []map[string]any{{"label": "Approve"}, {"label": "Reject"}}}})
	gateID := gate["id"].(string)
	qPath := "/api/projects/projA/agent-questions/" + qaID
	gatePath := "/api/projects/projA/agent-questions/" + gateID
	yes := map[string]any{"response": "Yes"}
	approve := func(by any) map[string]any { return map[string]any{"response": "Approve", "responded_by": by} }

	refused := []struct {
		name  string
		r     req
		code  int
		want  string // in the body: the error code or the rule's words
		leaks string // must not be in the body
		// audited: the responders check refused a person, which the audit
		// trail records as a "refused" line; nothing else may change.
		audited bool
	}{
		// 1. An operator answers as itself, never as someone it names.
		{"operator names a Slack user (object)", req{method: "POST", path: gatePath + "/respond", token: "tok-opA",
			body: approve(map[string]any{"platform": "slack", "id": "U1"})}, 403, "act_for", "", false},
		{"operator names a Slack user (string)", req{method: "POST", path: gatePath + "/respond", token: "tok-opA",
			body: approve("slack:U1")}, 403, "not_allowed", "", false},
		{"operator names a bare user id", req{method: "POST", path: gatePath + "/respond", token: "tok-opA",
			body: approve("U2")}, 403, "not_allowed", "", false},
		{"operator answers a gate it is not on", req{method: "POST", path: gatePath + "/respond", token: "tok-opA",
			body: map[string]any{"response": "Approve"}}, 403, "not_allowed", "", true},
		{"relay names someone not on the gate", req{method: "POST", path: gatePath + "/respond", token: "tok-relay",
			body: approve("slack:U3")}, 403, "not_allowed", "", true},
		{"relay names a person with no id", req{method: "POST", path: gatePath + "/respond", token: "tok-relay",
			body: approve(map[string]any{"platform": "slack"})}, 400, "responded_by", "", false},
		{"agent answers", req{method: "POST", path: qPath + "/respond", token: "tok-agentA", body: yes}, 403, "operator token", "", false},
		{"other project's operator answers", req{method: "POST", path: qPath + "/respond", token: "tok-opB", body: yes}, 403, "forbidden", "", false},

		// 2. Who asks: an agent as itself; an operator never as an agent.
		{"operator of B asks as agentA in B", req{method: "POST", path: "/api/projects/projB/agent-questions", token: "tok-opB",
			body: map[string]any{"agent_id": "agentA", "question": "Q?", "resume": map[string]any{"url": "https://runtime.example/resume"}}},
			403, "only its own token may ask", "", false},
		{"operator of A asks as agentA", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-opA",
			body: map[string]any{"agent_id": "agentA", "question": "Q?"}}, 403, "agent_id", "", false},
		{"operator of B asks in A", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-opB",
			body: map[string]any{"question": "Q?"}}, 403, "forbidden", "", false},
		{"agentA2 asks as agentA", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA2",
			body: map[string]any{"agent_id": "agentA", "question": "Q?"}}, 403, "agent_id", "", false},

		// 3. Runs and idempotency keys belong to the agent that made them.
		{"agentA2 re-asks agentA's items in agentA's run", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA2",
			body: map[string]any{"run_id": "runA", "question": "Rotate the database password?",
				"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}}}, 409, "belongs to another agent", "SECRET-CONTEXT", false},
		{"agentA2 asks something else in agentA's run", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA2",
			body: map[string]any{"run_id": "runA", "question": "Something else?"}}, 409, "run_id", "SECRET-CONTEXT", false},
		{"operator asks in agentA's run", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-opA",
			body: map[string]any{"run_id": "runA", "question": "Something else?"}}, 409, "run_id", "SECRET-CONTEXT", false},
		{"agentA2 pauses agentA's run", req{method: "POST", path: "/api/projects/projA/agent-runs/runA/pause", token: "tok-agentA2"}, 404, "not_found", "", false},
		{"agentA2 reads agentA's run", req{method: "GET", path: "/api/projects/projA/agent-runs/runA", token: "tok-agentA2"}, 404, "not_found", "", false},
		{"agentA2 lists agentA's run questions", req{method: "GET", path: "/api/projects/projA/agent-runs/runA/questions", token: "tok-agentA2"}, 404, "not_found", "SECRET-CONTEXT", false},
		{"agentA2 reads agentA's question", req{method: "GET", path: qPath, token: "tok-agentA2"}, 404, "not_found", "SECRET-CONTEXT", false},
		{"agentA2 waits on agentA's question", req{method: "GET", path: qPath + "/wait?timeout=1s", token: "tok-agentA2"}, 404, "not_found", "SECRET-CONTEXT", false},
		{"agentA2 cancels agentA's question", req{method: "POST", path: qPath + "/cancel", token: "tok-agentA2",
			body: map[string]any{"reason": "agent"}}, 404, "not_found", "SECRET-CONTEXT", false},

		// 5. Web pages: JSON only, and never from another site.
		{"text/plain body", req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA", body: `{"question": "Q?"}`,
			header: map[string]string{"Content-Type": "text/plain"}}, 415, "application/json", "", false},
		{"form body", req{method: "POST", path: qPath + "/respond", token: "tok-opA", body: "response=Yes",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "unsupported_media_type", "", false},
		{"cross-site Origin", req{method: "POST", path: qPath + "/respond", token: "tok-opA", body: yes,
			header: map[string]string{"Origin": "http://evil.example"}}, 403, "cross-site", "", false},
		{"Origin null", req{method: "POST", path: qPath + "/respond", token: "tok-opA", body: yes,
			header: map[string]string{"Origin": "null"}}, 403, "cross-site", "", false},
		{"Sec-Fetch-Site cross-site", req{method: "POST", path: qPath + "/cancel", token: "tok-opA", body: map[string]any{"reason": "user"},
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403, "cross-site", "", false},

		// 6. /metrics behind metrics.token.
		{"metrics without its token", req{method: "GET", path: "/metrics"}, 401, "metrics token", "projA", false},
		{"metrics with an operator token", req{method: "GET", path: "/metrics", token: "tok-opA"}, 401, "metrics token", "projA", false},

		// Signed platform paths: the person is the verified chat user.
		{"Slack click with a bad signature", signedSlack(slackClick(t, fs, "U1", "Approve"), "wrong-secret"), 401, "", "", false},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			before := p.snapshot(t, "runA", "runGate")
			code, body := p.send(t, c.r)
			assert.Equal(t, c.code, code, body)
			assert.Contains(t, body, c.want)
			if c.leaks != "" {
				assert.NotContains(t, body, c.leaks)
			}
			after := p.snapshot(t, "runA", "runGate")
			if c.audited {
				assert.Equal(t, strings.Count(before, `"refused"`)+1, strings.Count(after, `"refused"`), "the refusal is audited")
				// Everything else reads the same.
				before, after = refusedLine.ReplaceAllString(before, ""), refusedLine.ReplaceAllString(after, "")
			}
			assert.Equal(t, before, after, "a refused probe changed stored state")
		})
	}

	t.Run("Slack click by someone not on the gate changes nothing", func(t *testing.T) {
		before := p.snapshot(t, "runGate")
		code, _ := p.send(t, signedSlack(slackClick(t, fs, "U9", "Approve"), secSlackSecret))
		assert.Equal(t, 200, code)
		require.Eventually(t, func() bool { return len(fs.Ephemerals("U9")) > 0 }, 5*time.Second, 10*time.Millisecond)
		assert.Contains(t, fs.Ephemerals("U9")[0].Text, "changed nothing")
		after := p.snapshot(t, "runGate")
		// Only the audit's "refused" line may be new.
		assert.Equal(t, strings.Count(before, `"voted"`), strings.Count(after, `"voted"`))
		assert.Contains(t, after, `"refused"`)
	})

	t.Run("Discord clicks: a forged signature and someone not on the gate change nothing", func(t *testing.T) {
		var msgs []fakediscord.Message
		require.Eventually(t, func() bool { msgs = fd.Messages("1000"); return len(msgs) > 0 }, 5*time.Second, 10*time.Millisecond)
		m := fd.Message(msgs[len(msgs)-1].ID)
		c := fd.Button(m, "Approve")
		in, _, _ := fd.Interaction(fakediscord.User{ID: "111", Name: "U1"}, m, 3, map[string]any{"custom_id": c.CustomID, "component_type": 2})
		body, _ := json.Marshal(in)
		_, stamp := fd.Sign(body, time.Now())
		before := p.snapshot(t, "runGate")
		code, _ := p.send(t, req{method: "POST", path: "/discord/interactions", body: string(body), header: map[string]string{
			"X-Signature-Ed25519": strings.Repeat("ab", 64), "X-Signature-Timestamp": stamp}})
		assert.Equal(t, 401, code, "a forged Discord signature is refused")
		assert.Equal(t, before, p.snapshot(t, "runGate"))

		resp := fd.Click(fakediscord.User{ID: "999", Name: "mallory"}, m.ID, "Approve")
		require.NotNil(t, resp.Data)
		require.NotNil(t, resp.Data.Content)
		assert.Contains(t, *resp.Data.Content, "may answer")
		after := p.snapshot(t, "runGate")
		assert.Equal(t, strings.Count(before, `"voted"`), strings.Count(after, `"voted"`))
		assert.Equal(t, strings.Count(before, `"pending"`), strings.Count(after, `"pending"`))
	})

	t.Run("idempotency key of another agent asks anew", func(t *testing.T) {
		code, body := p.send(t, req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA2",
			body: map[string]any{"run_id": "runA2", "question": "Rotate the database password?",
				"options": []map[string]any{{"label": "Yes"}, {"label": "No"}}, "idempotency_key": "toolu_A"}})
		assert.Equal(t, 201, code, body)
		assert.NotContains(t, body, qaID)
		assert.NotContains(t, body, "SECRET-CONTEXT")
		rec := p.jsonOf(t, req{method: "GET", path: qPath, token: "tok-admin"})
		assert.Equal(t, "pending", rec["status"], "agentA's question must stay pending")
	})

	t.Run("a relay answers for the people on the gate, recorded as relayed", func(t *testing.T) {
		code, body := p.send(t, req{method: "POST", path: gatePath + "/respond", token: "tok-relay", body: approve("slack:U1")})
		require.Equal(t, 202, code, body)
		// The same person again is one vote, not two.
		code, body = p.send(t, req{method: "POST", path: gatePath + "/respond", token: "tok-relay",
			body: approve(map[string]any{"platform": "slack", "id": "U1"})})
		require.Equal(t, 202, code, body)
		rec := p.jsonOf(t, req{method: "GET", path: gatePath, token: "tok-admin"})
		require.Equal(t, "pending", rec["status"], "one person voting twice must not pass a two-person gate")
		code, body = p.send(t, req{method: "POST", path: gatePath + "/respond", token: "tok-relay",
			body: approve(map[string]any{"platform": "slack", "id": "U2", "name": "bob"})})
		require.Equal(t, 202, code, body)
		rec = p.jsonOf(t, req{method: "GET", path: gatePath, token: "tok-admin"})
		assert.Equal(t, "answered", rec["status"])
		by := rec["responded_by"].(map[string]any)
		assert.Equal(t, "relay", by["via"])
		var voters []string
		for _, v := range rec["votes"].([]any) {
			b := v.(map[string]any)["by"].(map[string]any)
			voters = append(voters, fmt.Sprint(b["platform"], ":", b["id"], " via ", b["via"]))
		}
		assert.ElementsMatch(t, []string{"slack:U1 via relay", "slack:U2 via relay"}, voters)
		audit := p.jsonOf(t, req{method: "GET", path: "/api/projects/projA/audit?question=" + gateID, token: "tok-admin"})
		last := audit["entries"].([]any)
		var answered map[string]any
		for _, e := range last {
			if e.(map[string]any)["type"] == "answered" {
				answered = e.(map[string]any)
			}
		}
		require.NotNil(t, answered, "the audit trail records the answer")
		assert.Equal(t, "relay", answered["by"].(map[string]any)["via"], "the audit names the relaying operator")
	})

	t.Run("the metrics token opens /metrics", func(t *testing.T) {
		code, body := p.send(t, req{method: "GET", path: "/metrics", token: "metrics-token"})
		assert.Equal(t, 200, code)
		assert.Contains(t, body, "askbridge_questions_total")
	})

	t.Run("same-origin and header-less clients keep working", func(t *testing.T) {
		code, body := p.send(t, req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA",
			body: map[string]any{"run_id": "runA3", "question": "Q3?"}, header: map[string]string{"Origin": p.URL}})
		assert.Equal(t, 201, code, body)
		code, body = p.send(t, req{method: "POST", path: "/api/projects/projA/agent-questions", token: "tok-agentA",
			body: map[string]any{"run_id": "runA4", "question": "Q4?"}, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}})
		assert.Equal(t, 201, code, body)
	})
}

// TestLocalBridgeRefusesOtherHostsAndSites: the embedded default with no
// tokens trusts its local user, so it must not be reachable from a web page:
// not through DNS rebinding (a Host that is not loopback), not by a
// cross-site form or fetch.
func TestLocalBridgeRefusesOtherHostsAndSites(t *testing.T) {
	p := startBridge(t)
	port := strings.TrimPrefix(p.URL, "http://127.0.0.1")
	ask := map[string]any{"question": "Allow Bash: rm -rf build?", "options": []map[string]any{{"label": "Allow"}, {"label": "Deny"}}}
	q := p.jsonOf(t, req{method: "POST", path: "/api/projects/demo/agent-questions", body: ask})
	qPath := "/api/projects/demo/agent-questions/" + q["id"].(string)
	snap := func() string {
		_, b := p.send(t, req{method: "GET", path: "/api/projects/demo/agent-questions"})
		_, a := p.send(t, req{method: "GET", path: "/api/projects/demo/audit"})
		return b + a
	}
	probes := []struct {
		name string
		r    req
		code int
		want string
	}{
		{"rebound Host reads the list", req{method: "GET", path: "/api/projects/demo/agent-questions?status=pending",
			header: map[string]string{"Host": "evil.example" + port}}, 403, "127.0.0.1"},
		{"rebound Host approves", req{method: "POST", path: qPath + "/respond", body: map[string]any{"response": "Allow"},
			header: map[string]string{"Host": "evil.example" + port}}, 403, "no tokens"},
		{"rebound Host opens the inbox", req{method: "GET", path: "/", header: map[string]string{"Host": "evil.example" + port}}, 403, "no tokens"},
		{"rebound Host reads the event stream", req{method: "GET", path: "/api/projects/demo/events",
			header: map[string]string{"Host": "evil.example" + port}}, 403, "no tokens"},
		{"cross-site text/plain ask", req{method: "POST", path: "/api/projects/demo/agent-questions", body: `{"question": "x?"}`,
			header: map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}}, 403, "cross-site"},
		{"text/plain ask from no site", req{method: "POST", path: "/api/projects/demo/agent-questions", body: `{"question": "x?"}`,
			header: map[string]string{"Content-Type": "text/plain"}}, 415, "application/json"},
		{"cross-site approve", req{method: "POST", path: qPath + "/respond", body: map[string]any{"response": "Allow"},
			header: map[string]string{"Origin": "http://evil.example"}}, 403, "cross-site"},
		{"cross-site inbox form", req{method: "POST", path: "/questions/" + q["id"].(string), body: "choice=Allow",
			header: map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}}, 403, "cross-site"},
	}
	for _, c := range probes {
		t.Run(c.name, func(t *testing.T) {
			before := snap()
			code, body := p.send(t, c.r)
			assert.Equal(t, c.code, code, body)
			assert.Contains(t, body, c.want)
			assert.NotContains(t, body, "Allow Bash", "a refused request must not see the question")
			assert.Equal(t, before, snap())
		})
	}
	// The local user, curl and the CLI keep working: localhost by name too.
	code, body := p.send(t, req{method: "GET", path: "/api/projects/demo/agent-questions", header: map[string]string{"Host": "localhost" + port}})
	assert.Equal(t, 200, code, body)
	code, body = p.send(t, req{method: "POST", path: qPath + "/respond", body: map[string]any{"response": "Allow"}})
	assert.Equal(t, 202, code, body)
	// /metrics needs no token unless one is configured.
	code, _ = p.send(t, req{method: "GET", path: "/metrics"})
	assert.Equal(t, 200, code)
}
