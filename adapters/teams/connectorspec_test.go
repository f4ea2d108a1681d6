package teams

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
)

// spec is Microsoft's Bot Connector API description (Swagger 2.0),
// testdata/connector-api.json, from microsoft/botframework-sdk
// specs/botframework-protocol/botframework-channel.json (MIT licence,
// testdata/connector-api.LICENSE).
type spec struct {
	Paths       map[string]map[string]operation `json:"paths"`
	Definitions map[string]schema               `json:"definitions"`
}

type operation struct {
	Parameters []struct {
		In     string `json:"in"`
		Schema schema `json:"schema"`
	} `json:"parameters"`
	Responses map[string]struct {
		Schema *schema `json:"schema"`
	} `json:"responses"`
}

type schema struct {
	Ref                  string            `json:"$ref"`
	Type                 string            `json:"type"`
	Properties           map[string]schema `json:"properties"`
	Items                *schema           `json:"items"`
	AdditionalProperties json.RawMessage   `json:"additionalProperties"`
}

func loadSpec(t *testing.T) *spec {
	t.Helper()
	b, err := os.ReadFile("testdata/connector-api.json")
	if err != nil {
		t.Fatal(err)
	}
	var s spec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func (s *spec) resolve(sc schema) schema {
	for sc.Ref != "" {
		sc = s.Definitions[strings.TrimPrefix(sc.Ref, "#/definitions/")]
	}
	return sc
}

// check lists where v does not fit sc: a field the description does not
// name, or a value of another JSON type. Free-form objects (channelData,
// value, an attachment's content: type object without properties) take
// anything.
func (s *spec) check(path string, v any, sc schema) []string {
	sc = s.resolve(sc)
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if sc.Type != "" && sc.Type != "object" {
			return []string{fmt.Sprintf("%s: an object, the description says %s", path, sc.Type)}
		}
		if len(sc.Properties) == 0 {
			return nil
		}
		for k, val := range x {
			p, ok := sc.Properties[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: not in the description", path, k))
				continue
			}
			out = append(out, s.check(path+"."+k, val, p)...)
		}
	case []any:
		if sc.Type != "array" {
			return []string{fmt.Sprintf("%s: an array, the description says %s", path, sc.Type)}
		}
		for i, val := range x {
			out = append(out, s.check(fmt.Sprintf("%s[%d]", path, i), val, *sc.Items)...)
		}
	case string:
		if sc.Type != "" && sc.Type != "string" {
			out = append(out, fmt.Sprintf("%s: a string, the description says %s", path, sc.Type))
		}
	case bool:
		if sc.Type != "" && sc.Type != "boolean" {
			out = append(out, fmt.Sprintf("%s: a boolean, the description says %s", path, sc.Type))
		}
	case float64:
		if sc.Type != "" && sc.Type != "number" && sc.Type != "integer" {
			out = append(out, fmt.Sprintf("%s: a number, the description says %s", path, sc.Type))
		}
	}
	return out
}

// checkExchanges checks every request the fake Connector answered, and its
// answer, against the description: the route and method exist, the request
// body fits the operation's body schema, the answer fits the schema of its
// status (the error body ErrorResponse for failures). Activities the fake
// sent to the bot fit the Activity definition.
func checkExchanges(t *testing.T, s *spec, ex []faketeams.Exchange) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, x := range ex {
		if x.Method == "BOT" {
			var v any
			_ = json.Unmarshal(x.Request, &v)
			for _, p := range s.check("activity", v, schema{Ref: "#/definitions/Activity"}) {
				t.Errorf("an activity the fake sends to the bot: %s", p)
			}
			continue
		}
		key := x.Method + " " + x.Route
		seen[key] = true
		op, ok := s.Paths[x.Route][strings.ToLower(x.Method)]
		if !ok {
			t.Errorf("%s: the Connector's description has no such operation", key)
			continue
		}
		for _, p := range op.Parameters {
			if p.In != "body" {
				continue
			}
			var v any
			if err := json.Unmarshal(x.Request, &v); err != nil {
				t.Errorf("%s: request body is not JSON", key)
			}
			for _, problem := range s.check("request", v, p.Schema) {
				t.Errorf("%s: %s", key, problem)
			}
		}
		r, ok := op.Responses[fmt.Sprint(x.Status)]
		if !ok {
			r, ok = op.Responses["default"]
			if x.Status/100 == 2 {
				t.Errorf("%s: answered %d, which the description does not list", key, x.Status)
			}
		}
		if !ok || r.Schema == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(x.Response, &v); err != nil {
			t.Errorf("%s: answer %d is not JSON: %s", key, x.Status, x.Response)
			continue
		}
		for _, problem := range s.check("response", v, *r.Schema) {
			t.Errorf("%s %d: %s", key, x.Status, problem)
		}
		if x.Status/100 != 2 {
			var e struct {
				Error struct{ Code, Message string }
			}
			if json.Unmarshal(x.Response, &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Errorf("%s %d: the error body has no error.code and error.message: %s", key, x.Status, x.Response)
			}
		}
	}
	return seen
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestFakeFollowsConnectorAPI drives the adapter through every Connector
// call it makes — a new thread in a channel, a post in a thread and in a
// chat, a reply, updates, a missing conversation, a deleted activity, 429
// and 5xx — and checks every request and answer the fake exchanged, and
// every activity it sent the bot, against Microsoft's description.
func TestFakeFollowsConnectorAPI(t *testing.T) {
	s := loadSpec(t)
	e := newEnv(t, nil)
	e.F.Install(e.Endpoint, testTeam, "Platform", testChannel, "Deployments")
	e.F.AddChat("19:chat0001@thread.v2")
	ask := func(req domain.AskRequest) *domain.Question { return e.ask(t, req) }
	yesNo := []domain.Option{{Label: "Yes"}, {Label: "No"}}
	e.F.Fail(faketeams.OpCreate, http.StatusTooManyRequests)
	e.F.Fail(faketeams.OpCreate, http.StatusBadGateway)
	q := ask(domain.AskRequest{Question: "Ship it?", Options: yesNo})
	inThread := ask(domain.AskRequest{RunID: "run-2", Question: "And this?", Options: yesNo,
		Targets: []domain.Target{{Platform: Platform, Channel: testChannel, ThreadTS: q.Targets[0].MessageTS}}})
	chat := ask(domain.AskRequest{RunID: "run-3", Question: "In the chat?", Options: yesNo,
		Targets: []domain.Target{{Platform: Platform, Channel: "19:chat0001@thread.v2"}}})
	if err := e.A.Remind(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatal(err)
	}
	e.F.Fail(faketeams.OpUpdate, http.StatusServiceUnavailable)
	id, verb, data := mustAction(t, e, q, "Yes")
	if r := e.F.Invoke(e.Endpoint, aliceUser, id, verb, data); r.Type != cardContentType {
		t.Fatalf("click: %+v", r)
	}
	e.settle(t)
	e.F.Delete(chat.Targets[0].MessageTS)
	chat.Status = domain.StatusExpired
	if err := e.A.Finish(context.Background(), chat, chat.Targets[0]); err == nil {
		t.Error("finishing a deleted activity succeeded")
	}
	if _, err := e.A.Post(context.Background(), inThread, domain.Target{Platform: Platform, Channel: "19:gone@thread.tacv2"}); err == nil {
		t.Error("posting to a missing channel succeeded")
	}
	if _, err := e.A.Post(context.Background(), inThread, domain.Target{Platform: Platform, Channel: "19:gone@thread.v2"}); err == nil {
		t.Error("posting to a missing chat succeeded")
	}
	seen := checkExchanges(t, s, e.F.Exchanges())
	for _, want := range []string{"POST /v3/conversations", "POST /v3/conversations/{conversationId}/activities",
		"POST /v3/conversations/{conversationId}/activities/{activityId}", "PUT /v3/conversations/{conversationId}/activities/{activityId}"} {
		if !seen[want] {
			t.Errorf("the test never exercised %s (saw %v)", want, sortedKeys(seen))
		}
	}
}

// mustAction is the verb and data of q's posted button titled label.
func mustAction(t *testing.T, e *env, q *domain.Question, label string) (string, string, json.RawMessage) {
	t.Helper()
	a, ok := seenAction(e.F.Activity(q.Targets[0].MessageTS).Versions[0], label)
	if !ok {
		t.Fatalf("no button %q", label)
	}
	return q.Targets[0].MessageTS, a.Verb, a.Data
}
