package domain_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/domain"
)

// FuzzAsk feeds arbitrary create bodies through decoding, normalization and
// validation: no panic; an accepted question respects every limit of
// docs/openapi.yaml; normalizing twice changes nothing; a refusal names fields.
func FuzzAsk(f *testing.F) {
	for _, s := range []string{
		`{"run_id":"run-42","agent_id":"deploy-bot","questions":[{"question":"Which auth method?","header":"Auth","multiSelect":false,"options":[{"label":"OAuth 2.0","description":"Standard","value":"oauth"},{"label":"API key","description":"Simple"}]}],"timeout":"30m"}`,
		`{"question":"Ship?","options":[{"label":"Yes"},{"label":"No"}]}`,
		`{"question":"Anything else?","timeout":600}`,
		`{"questions":[{"question":"A?","options":[{"label":"x"},{"label":"X"}]},{"question":"a?"}]}`,
		`{"parent_run_id":"p","question":"Sub?"}`,
		`{"question":" ","header":"0123456789abc","options":[{"label":""}],"timeout":"1s"}`,
		`{"question":"Q","resume":{"url":"http://x"},"targets":[{"platform":"slack","channel":"C1"}]}`,
		`{"questions":[{"question":"1"},{"question":"2"},{"question":"3"},{"question":"4"},{"question":"5"}]}`,
		`{"question":"Multi","multiSelect":true,"options":[{"label":"a","value":"  "},{"label":" b ","recommended":true}]}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, hasSecret bool) {
		var req domain.AskRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		q, timeout, err := domain.BuildQuestion(&req, domain.AskDefaults{Timeout: domain.DefaultTimeout}, hasSecret)
		if err != nil {
			var ce *domain.Error
			if !asError(err, &ce) {
				t.Fatalf("refusal without a code: %v", err)
			}
			if ce.Code == domain.EInvalid && len(ce.Details) == 0 {
				t.Fatalf("invalid without details: %v", err)
			}
			return
		}
		if n := len(q.Questions); n < 1 || n > domain.MaxItems {
			t.Fatalf("accepted %d items", n)
		}
		if timeout < 10*time.Second || timeout > 30*24*time.Hour {
			t.Fatalf("accepted timeout %s", timeout)
		}
		seen := map[string]bool{}
		for _, it := range q.Questions {
			if it.Question == "" || utf8.RuneCountInString(it.Header) > domain.MaxHeaderLen {
				t.Fatalf("accepted item %+v", it)
			}
			if seen[strings.ToLower(it.Question)] {
				t.Fatalf("accepted duplicate item text %q", it.Question)
			}
			seen[strings.ToLower(it.Question)] = true
			if n := len(it.Options); n == 1 || n > domain.MaxOptions {
				t.Fatalf("accepted %d options", n)
			}
			labels := map[string]bool{}
			for _, o := range it.Options {
				if o.Label == "" || o.Value == "" || labels[strings.ToLower(o.Label)] {
					t.Fatalf("accepted option %+v in %+v", o, it)
				}
				labels[strings.ToLower(o.Label)] = true
			}
		}
		again := domain.NormalizeItems(q.Questions)
		a, _ := json.Marshal(again)
		b, _ := json.Marshal(q.Questions)
		if string(a) != string(b) {
			t.Fatalf("normalization is not stable:\n%s\n%s", b, a)
		}
		if q.WebhookMode() && !hasSecret {
			t.Fatal("webhook mode accepted without a secret")
		}
	})
}

func asError(err error, target **domain.Error) bool {
	ce, ok := err.(*domain.Error)
	if ok {
		*target = ce
	}
	return ok
}

// FuzzRespond feeds arbitrary respond bodies against questions of each
// shape: no panic; an accepted answer answers every item, a single-select
// item with one choice, and its three forms agree.
func FuzzRespond(f *testing.F) {
	for _, s := range []string{
		`{"response":"oauth"}`, `{"response":"API KEY"}`, `{"response":"something else"}`,
		`{"answers":{"Which auth method?":"OAuth 2.0"}}`,
		`{"answers":{"Which features?":["Login","Reports"]}}`,
		`{"answers":{"Which auth method?":["OAuth 2.0","API key"]}}`,
		`{"response":"x","answers":{"a":"b"}}`, `{"answers":{"nope":"x"}}`, `{"response":""}`,
		`{"answers":{"Which auth method?":"oauth","Which features?":"Login, Dashboard","Anything else?":"ship it"}}`,
	} {
		for shape := range uint8(4) {
			f.Add([]byte(s), shape)
		}
	}
	auth := domain.Item{Question: "Which auth method?", Options: []domain.Option{{Label: "OAuth 2.0", Value: "oauth"}, {Label: "API key", Value: "API key"}}}
	feats := domain.Item{Question: "Which features?", MultiSelect: true, Options: []domain.Option{{Label: "Login", Value: "login"}, {Label: "Dashboard", Value: "dash"}, {Label: "Reports", Value: "reports"}}}
	open := domain.Item{Question: "Anything else?"}
	shapes := [][]domain.Item{{auth}, {feats}, {open}, {auth, feats, open}}
	f.Fuzz(func(t *testing.T, body []byte, shape uint8) {
		var req domain.RespondRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		q := &domain.Question{Status: domain.StatusPending, Questions: shapes[int(shape)%len(shapes)]}
		ans, err := domain.ParseAnswer(q, req)
		if err != nil {
			if domain.ErrorCode(err) == "" {
				t.Fatalf("refusal without a code: %v", err)
			}
			return
		}
		for _, it := range q.Questions {
			sel := ans.Selections[it.Question]
			if len(sel) == 0 {
				t.Fatalf("item %q left unanswered: %+v", it.Question, ans)
			}
			if !it.MultiSelect && len(sel) != 1 {
				t.Fatalf("single-select %q got %v", it.Question, sel)
			}
			if ans.Answers[it.Question] != strings.Join(sel, ", ") {
				t.Fatalf("answers %q and selections %v disagree", ans.Answers[it.Question], sel)
			}
		}
	})
}
