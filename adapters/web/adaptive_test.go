package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

func adaptiveAsk(t *testing.T, body string) domain.AskRequest {
	t.Helper()
	var req domain.AskRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	return req
}

const webAdaptive = `{"run_id":"r1","context":"Pick how it signs in.","context_image":{"url":"https://img.example/arch.png","alt":"the architecture <diagram>"},
 "questions":[
 {"question":"Which auth?","header":"Auth","options":[{"label":"API key","default":true,"image":{"url":"https://evil.example/k.png","alt":"a key"}},{"label":"OAuth"}]},
 {"question":"Ticket?","options":[],"show_if":{"item":0,"any_of":["API key"]},"other":{"pattern":"OPS-[0-9]+","max_length":12,"hint":"a ticket id like OPS-123"}},
 {"question":"Scopes?","multiSelect":true,"options":[{"label":"read","default":true},{"label":"write"}],"show_if":{"item":0,"none_of":["API key"]}}]}`

// The inbox form of a question that adapts: defaults checked, conditional
// items marked for live reveal with their condition in words, the rules as
// pattern/maxlength attributes and in words, pictures only from
// web.image_hosts (others are links with alt text), and the CSP allowing
// exactly those hosts.
func TestInboxFormOfAnAdaptiveQuestion(t *testing.T) {
	e := newEnv(t, envOptions{imageHosts: []string{"img.example"}})
	q := e.ask("ops", adaptiveAsk(t, webAdaptive))
	p := e.client().getPage("/questions/" + q.ID)
	for _, want := range []string{
		`name="a0" value="o0" checked`, // the default, pre-selected
		`data-show-item="0" data-values="o0"`,
		`data-show-item="0" data-values="o0" data-none="1"`,
		`(asked only if “Auth” is API key)`,
		`pattern="OPS-[0-9]&#43;"`, `maxlength="12"`, // html/template writes + as &#43;, which the browser reads back
		`Expected: a ticket id like OPS-123 (at most 12 characters, matching OPS-[0-9]&#43;)`,
		`<img class="pic" src="https://img.example/arch.png" alt="the architecture &lt;diagram&gt;"`,
		`<a class="pic-link" href="https://evil.example/k.png" rel="noopener noreferrer nofollow" target="_blank">Picture: a key</a>`,
		`<span class="rec def">Default</span>`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(p.body, `src="https://evil.example`) {
		t.Error("a picture from a host not in web.image_hosts is loaded by the page")
	}
	csp := p.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "img-src 'self' data: https://img.example;") {
		t.Errorf("CSP img-src does not allow exactly web.image_hosts: %q", csp)
	}
}

// A failing free-text answer is refused next to its field, with the hint
// and the rule, what was typed kept, and nothing recorded; a hidden item
// left empty is skipped.
func TestInboxRefusesFreeTextAgainstTheRules(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", adaptiveAsk(t, webAdaptive))
	c := e.client()
	form := url.Values{"a0": {"o0"}, "t1": {"ops 12"}, "csrf": {c.csrf("/")}, "return": {"question"}}
	p := c.post("/questions/"+q.ID+"/answer", form)
	if p.status != http.StatusBadRequest {
		t.Fatalf("status %d", p.status)
	}
	for _, want := range []string{`class="problem" id="p-` + q.ID + `-1"`, "expected a ticket id like OPS-123", `value="ops 12"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("refusal lacks %s", want)
		}
	}
	if got := e.get("ops", q.ID); got.Status != domain.StatusPending {
		t.Fatalf("recorded: %s", got.Status)
	}
	form.Set("t1", "OPS-12")
	p = c.post("/questions/"+q.ID+"/answer", form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("status %d: %s", p.status, p.body)
	}
	got := e.get("ops", q.ID)
	if got.Answers["Ticket?"] != "OPS-12" || len(got.Skipped) != 1 || got.Skipped[0].Question != "Scopes?" {
		t.Fatalf("answers %v skipped %v", got.Answers, got.Skipped)
	}
}

func TestImageHostsRefusedUnlessHostNames(t *testing.T) {
	for _, h := range []string{"https://img.example", "img.example/x", "img.example:443", "*", "a b", "img.example;", "'self'"} {
		if CheckImageHost(h) == nil {
			t.Errorf("%q accepted", h)
		}
	}
	for _, h := range []string{"img.example", "*.cdn.example"} {
		if err := CheckImageHost(h); err != nil {
			t.Errorf("%q refused: %v", h, err)
		}
	}
}
