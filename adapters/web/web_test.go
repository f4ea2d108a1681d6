package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

func dur(d time.Duration) *domain.Duration { v := domain.Duration(d); return &v }

func TestInboxListsPendingNearestDeadlineFirst(t *testing.T) {
	e := newEnv(t, envOptions{})
	later := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "Later?", Timeout: dur(2 * time.Hour)})
	soon := e.ask("web", domain.AskRequest{RunID: "r2", Question: "Soon?", Timeout: dur(5 * time.Minute)})
	mid := e.ask("ops", domain.AskRequest{RunID: "r3", Question: "Mid?", Timeout: dur(30 * time.Minute)})
	done := e.ask("ops", domain.AskRequest{RunID: "r4", Question: "Done?"})
	if _, err := e.router.Answer(context.Background(), "ops", done.ID, domain.RespondRequest{Answers: map[string]domain.StringList{"Done?": {"yes"}}},
		domain.Person{Platform: "api", ID: "x"}); err != nil {
		t.Fatal(err)
	}
	p := e.client().getPage("/")
	if p.status != 200 {
		t.Fatalf("status %d", p.status)
	}
	order := []int{strings.Index(p.body, `id="q-`+soon.ID), strings.Index(p.body, `id="q-`+mid.ID), strings.Index(p.body, `id="q-`+later.ID)}
	if order[0] < 0 || !(order[0] < order[1] && order[1] < order[2]) {
		t.Fatalf("cards not nearest deadline first: positions %v", order)
	}
	if strings.Contains(p.body, done.ID) {
		t.Fatal("an answered question is still in the inbox")
	}
	if !strings.Contains(p.body, "3 questions are waiting") {
		t.Fatal("the count of waiting questions is missing")
	}
}

func TestAgentTextIsEscaped(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", domain.AskRequest{AgentName: `<img src=x onerror=alert(1)>`,
		Question: `Ship <script>alert("q")</script>?`,
		Context:  "Deploy **v2** with `make <release>`\n<script>alert('ctx')</script>\n- one\n- <b>two</b>",
		Options:  []domain.Option{{Label: `<i>Yes</i>`, Description: `"quoted" & <u>desc</u>`, Recommended: true}, {Label: "No"}}})
	p := e.client().getPage("/questions/" + q.ID)
	for _, bad := range []string{"<script>alert", "<img src=x", "<i>Yes</i>", "<u>desc</u>", "<b>two</b>"} {
		if strings.Contains(p.body, bad) {
			t.Errorf("agent markup %q reached the page unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert", "<strong>v2</strong>", "<code>make &lt;release&gt;</code>", "<li>&lt;b&gt;two&lt;/b&gt;</li>",
		"&lt;i&gt;Yes&lt;/i&gt;", `class="option recommended"`, "Recommended"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("no content security policy: %q", csp)
	}
}

func FuzzRenderContext(f *testing.F) {
	for _, s := range []string{"**a** `b`", "```\n<x>\n```", "- <a href=x>y</a>\n\ntext", "<script>", "`**`**`", "a & b < c"} {
		f.Add(s)
	}
	allowed := strings.NewReplacer("<p>", "", "</p>", "", "<br>", "", "<ul>", "", "</ul>", "", "<li>", "", "</li>", "",
		"<pre>", "", "</pre>", "", "<code>", "", "</code>", "", "<strong>", "", "</strong>", "")
	f.Fuzz(func(t *testing.T, s string) {
		out := allowed.Replace(string(renderContext(s)))
		if strings.ContainsAny(out, "<>") {
			t.Fatalf("markup from the input survived: %q → %q", s, out)
		}
	})
}

// TestAnswerFormsWithoutJS posts each card shape the way a browser without
// JavaScript does and checks the three answer forms the agent receives.
func TestAnswerFormsWithoutJS(t *testing.T) {
	auth := []domain.Option{{Label: "OAuth 2.0", Value: "oauth", Description: "Standard"}, {Label: "API key"}}
	feats := []domain.Option{{Label: "Login"}, {Label: "Dashboard"}, {Label: "Billing"}}
	cases := []struct {
		name    string
		req     domain.AskRequest
		form    url.Values
		answers map[string]string
		sel     map[string][]string
		resp    string
	}{
		{"single select button", domain.AskRequest{Question: "Which auth method?", Options: auth},
			url.Values{"a0": {"o0"}}, map[string]string{"Which auth method?": "OAuth 2.0"}, map[string][]string{"Which auth method?": {"OAuth 2.0"}}, "oauth"},
		{"single select other", domain.AskRequest{Question: "Which auth method?", Options: auth},
			url.Values{"a0": {"other"}, "t0": {"SAML via Okta"}}, map[string]string{"Which auth method?": "SAML via Okta"}, map[string][]string{"Which auth method?": {"SAML via Okta"}}, "SAML via Okta"},
		{"multi select with other", domain.AskRequest{Question: "Which features?", MultiSelect: true, Options: feats},
			url.Values{"a0": {"o0", "o2"}, "t0": {"Audit log"}}, map[string]string{"Which features?": "Login, Billing, Audit log"},
			map[string][]string{"Which features?": {"Login", "Billing", "Audit log"}}, "Login, Billing, Audit log"},
		{"open ended", domain.AskRequest{Question: "Anything else?"},
			url.Values{"t0": {"  Ship it on Monday  "}}, map[string]string{"Anything else?": "Ship it on Monday"}, map[string][]string{"Anything else?": {"Ship it on Monday"}}, "Ship it on Monday"},
		{"two items", domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth", Options: auth}, {Question: "Which features?", MultiSelect: true, Options: feats}}},
			url.Values{"a0": {"o1"}, "t0": {"ignored: an option was chosen"}, "a1": {"o1"}},
			map[string]string{"Which auth method?": "API key", "Which features?": "Dashboard"},
			map[string][]string{"Which auth method?": {"API key"}, "Which features?": {"Dashboard"}}, "API key; Dashboard"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			q := e.ask("ops", tc.req)
			c := e.client()
			tc.form.Set("csrf", c.csrf("/"))
			tc.form.Set("return", "inbox")
			p := c.post("/questions/"+q.ID+"/answer", tc.form)
			if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/?done=") {
				t.Fatalf("status %d location %q: %s", p.status, p.location, p.body)
			}
			got := e.get("ops", q.ID)
			if got.Status != domain.StatusAnswered || !reflect.DeepEqual(got.Answers, tc.answers) || !reflect.DeepEqual(got.Selections, tc.sel) || got.Response != tc.resp {
				t.Fatalf("got %s answers=%v selections=%v response=%q", got.Status, got.Answers, got.Selections, got.Response)
			}
			if got.RespondedBy == nil || got.RespondedBy.Platform != "web" || got.RespondedBy.ID != "local" || !got.Read {
				t.Fatalf("responded_by %+v read %v", got.RespondedBy, got.Read)
			}
			flash := c.getPage(p.location)
			if !strings.Contains(flash.body, "Answered ") || !strings.Contains(flash.body, "“"+q.Questions[0].Question+"”") {
				t.Fatalf("no confirmation on the inbox: %s", flash.body)
			}
		})
	}
}

func TestDismiss(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", domain.AskRequest{Question: "Proceed?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	c := e.client()
	p := c.post("/questions/"+q.ID+"/dismiss", url.Values{"csrf": {c.csrf("/")}, "return": {"question"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/questions/"+q.ID) {
		t.Fatalf("status %d location %q", p.status, p.location)
	}
	got := e.get("ops", q.ID)
	if got.Status != domain.StatusCancelled || got.CancelReason != domain.CancelUser {
		t.Fatalf("status %s reason %q", got.Status, got.CancelReason)
	}
	page := c.getPage(p.location)
	if !strings.Contains(page.body, "Dismissed by local web user") {
		t.Fatalf("final state not shown: %s", page.body)
	}
}

func TestFormPostWithoutCSRFTokenRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", domain.AskRequest{Question: "Proceed?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	c := e.client()
	good := c.csrf("/")
	other := e.client()
	foreign := other.csrf("/") // a valid token of another session
	for name, form := range map[string]url.Values{
		"missing":       {"a0": {"o0"}},
		"wrong":         {"a0": {"o0"}, "csrf": {good[:len(good)-2] + "xx"}},
		"other session": {"a0": {"o0"}, "csrf": {foreign}},
	} {
		for _, path := range []string{"/questions/" + q.ID + "/answer", "/questions/" + q.ID + "/dismiss"} {
			p := c.post(path, form)
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "This form was refused") {
				t.Errorf("%s token on %s: status %d", name, path, p.status)
			}
		}
	}
	if got := e.get("ops", q.ID); got.Status != domain.StatusPending {
		t.Fatalf("a refused form changed the question: %s", got.Status)
	}
	// No cookie at all.
	if p := e.client().post("/questions/"+q.ID+"/answer", url.Values{"a0": {"o0"}, "csrf": {good}}); p.status != http.StatusForbidden {
		t.Fatalf("without a cookie: status %d", p.status)
	}
}

func TestErrorsShownOnThePage(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	answered := e.ask("ops", domain.AskRequest{RunID: "a", Question: "Proceed?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	c := e.client()
	tok := c.csrf("/")
	if _, err := e.router.Answer(ctx, "ops", answered.ID, domain.RespondRequest{Answers: map[string]domain.StringList{"Proceed?": {"No"}}},
		domain.Person{Platform: "slack", ID: "U1", Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	p := c.post("/questions/"+answered.ID+"/answer", url.Values{"csrf": {tok}, "a0": {"o0"}})
	if p.status != http.StatusConflict || !strings.Contains(p.body, "already answered by bob") || !strings.Contains(p.body, "Answered by bob (Slack)") {
		t.Errorf("already answered: status %d", p.status)
	}

	restricted := e.ask("ops", domain.AskRequest{RunID: "b", Question: "Approve?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}},
		Responders: &domain.Responders{Users: []string{"slack:U0123"}}})
	p = c.post("/questions/"+restricted.ID+"/answer", url.Values{"csrf": {tok}, "a0": {"o0"}})
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "may not answer this question") || !strings.Contains(p.body, "slack:U0123") {
		t.Errorf("not allowed: status %d", p.status)
	}

	two := e.ask("ops", domain.AskRequest{RunID: "c", Questions: []domain.Item{
		{Question: "Which region?", Options: []domain.Option{{Label: "eu"}, {Label: "us"}}},
		{Question: "Why?"}}})
	p = c.post("/questions/"+two.ID+"/answer", url.Values{"csrf": {tok}, "a0": {"o1"}, "t1": {""}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `class="problem"`) || !strings.Contains(p.body, "required: every question must be answered") {
		t.Errorf("invalid answer: status %d: %s", p.status, p.body)
	}
	if !strings.Contains(p.body, `value="o1" checked`) {
		t.Error("the choice already made was not kept after the invalid submit")
	}
	for _, q := range []*domain.Question{restricted, two} {
		if e.get("ops", q.ID).Status != domain.StatusPending {
			t.Errorf("question %s changed", q.ID)
		}
	}
}

func TestLoginRequiredOffLoopback(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	ops := e.ask("ops", domain.AskRequest{Question: "Ops question?"})
	webq := e.ask("web", domain.AskRequest{Question: "Web question?"})
	c := e.client()
	p := c.getPage("/questions/" + ops.ID)
	if p.status != http.StatusSeeOther || p.location != "/login?next=%2Fquestions%2F"+ops.ID {
		t.Fatalf("signed out: status %d location %q", p.status, p.location)
	}
	if p := c.getPage("/inbox/events"); p.status != http.StatusUnauthorized {
		t.Fatalf("events signed out: status %d", p.status)
	}
	tok := c.csrf("/login")
	p = c.post("/login", url.Values{"csrf": {tok}, "token": {"tok-nobody"}})
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "That token was not accepted") || strings.Contains(p.body, "tok-nobody") {
		t.Fatalf("bad token: status %d", p.status)
	}
	if p := c.post("/login", url.Values{"token": {"tok-alice-0123456789"}}); p.status != http.StatusForbidden {
		t.Fatalf("login without csrf: status %d", p.status)
	}
	p = c.post("/login", url.Values{"csrf": {tok}, "token": {"tok-alice-0123456789"}, "next": {"//evil.example/"}})
	if p.status != http.StatusSeeOther || p.location != "/" {
		t.Fatalf("login: status %d location %q", p.status, p.location)
	}
	var sc string
	for _, v := range p.header.Values("Set-Cookie") {
		if strings.HasPrefix(v, sessionCookie+"=") {
			sc = v
		}
	}
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") || strings.Contains(sc, "tok-alice") {
		t.Fatalf("session cookie %q", sc)
	}
	inbox := c.getPage("/")
	if !strings.Contains(inbox.body, ops.ID) || strings.Contains(inbox.body, webq.ID) || !strings.Contains(inbox.body, "alice") {
		t.Fatal("alice should see the ops question only")
	}
	if p := c.getPage("/questions/" + webq.ID); p.status != http.StatusNotFound {
		t.Fatalf("another project's question: status %d", p.status)
	}
	if p := c.getPage("/projects/web/runs/" + webq.RunID); p.status != http.StatusNotFound {
		t.Fatalf("another project's run: status %d", p.status)
	}
	// Answers are recorded under the operator.
	p = c.post("/questions/"+ops.ID+"/answer", url.Values{"csrf": {c.csrf("/")}, "t0": {"fine"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", p.status, p.body)
	}
	if by := e.get("ops", ops.ID).RespondedBy; by == nil || by.Platform != "web" || by.ID != "alice" {
		t.Fatalf("responded_by %+v", by)
	}
	// A revoked token ends the session at once.
	e.auth.revoke("tok-alice-0123456789")
	if p := c.getPage("/"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("revoked: status %d", p.status)
	}
}

func TestSessionValidOnEveryReplicaWithTheSameKey(t *testing.T) {
	st := newTestStore(t)
	key := []byte("shared session key for the tests")
	a := newEnv(t, envOptions{requireLogin: true, sessionKey: key, store: st})
	b := newEnv(t, envOptions{requireLogin: true, sessionKey: key, store: st})
	other := newEnv(t, envOptions{requireLogin: true, store: st})
	c := a.client()
	c.login("tok-bob-0123456789")
	u, _ := url.Parse(a.srv.URL)
	cookies := c.hc.Jar.Cookies(u)
	for name, srv := range map[string]*env{"same key": b, "random key": other} {
		req, _ := http.NewRequest("GET", srv.srv.URL+"/", nil)
		for _, ck := range cookies {
			req.AddCookie(ck)
		}
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		want := http.StatusOK
		if name == "random key" {
			want = http.StatusSeeOther
		}
		if res.StatusCode != want {
			t.Errorf("%s: status %d, want %d", name, res.StatusCode, want)
		}
	}
}

func TestLiveStreamFollowsAnswersElsewhere(t *testing.T) {
	e := newEnv(t, envOptions{})
	first := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "First?"})
	c := e.client()
	c.getPage("/") // session cookie
	u, _ := url.Parse(e.srv.URL + "/inbox/events")
	req, _ := http.NewRequest("GET", u.String(), nil)
	for _, ck := range c.hc.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var typ string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- [2]string{typ, strings.TrimPrefix(line, "data: ")}
			}
		}
		close(events)
	}()
	next := func() (string, map[string]any) {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			var m map[string]any
			_ = json.Unmarshal([]byte(ev[1]), &m)
			return ev[0], m
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return "", nil
	}
	typ, data := next()
	if qs, _ := data["questions"].([]any); typ != "sync" || len(qs) != 1 || qs[0].(map[string]any)["id"] != first.ID || qs[0].(map[string]any)["run_id"] != "r1" {
		t.Fatalf("first event %s %v", typ, data)
	}
	second := e.ask("web", domain.AskRequest{RunID: "r2", Question: "Second?"}) // a new project appears too
	typ, data = next()
	if typ != domain.EventCreated || data["id"] != second.ID {
		t.Fatalf("want created %s, got %s %v", second.ID, typ, data)
	}
	if _, err := e.router.Answer(context.Background(), "ops", first.ID, domain.RespondRequest{Answers: map[string]domain.StringList{"First?": {"go"}}},
		domain.Person{Platform: "slack", ID: "U9", Name: "carol"}); err != nil {
		t.Fatal(err)
	}
	typ, data = next()
	if typ != domain.EventAnswered || data["id"] != first.ID || data["outcome"] != "Answered by carol (Slack)" {
		t.Fatalf("want answered, got %s %v", typ, data)
	}
}

func TestRunPageLinksPausedAndContinuationRuns(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	q := e.ask("ops", domain.AskRequest{RunID: "run-a", AgentID: "deploy-bot", Question: "Deploy?",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Resume: &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	c := e.client()
	// Before the run pauses, the answer is refused with a clear message.
	p := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {c.csrf("/")}, "a0": {"o0"}})
	if p.status != http.StatusConflict || !strings.Contains(p.body, "has not paused yet") {
		t.Fatalf("before pause: %d", p.status)
	}
	if _, err := e.store.PauseRun(ctx, "ops", "run-a", "deploy-bot", time.Now()); err != nil {
		t.Fatal(err)
	}
	p = c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {c.csrf("/")}, "a0": {"o0"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("after pause: %d %s", p.status, p.body)
	}
	final := e.get("ops", q.ID)
	if final.ResumedRunID == "" {
		t.Fatal("no continuation run")
	}
	run := c.getPage("/projects/ops/runs/run-a")
	for _, want := range []string{"resumed", "Answered by local web user", "continued as <a href=\"/projects/ops/runs/" + final.ResumedRunID} {
		if !strings.Contains(run.body, want) {
			t.Errorf("paused run page lacks %q", want)
		}
	}
	cont := c.getPage("/projects/ops/runs/" + final.ResumedRunID)
	if !strings.Contains(cont.body, `Continuation of <a href="/projects/ops/runs/run-a">run run-a</a>`) {
		t.Errorf("continuation page does not link back: %s", cont.body)
	}
}

// A link followed from another site (Slack, email) arrives without the
// SameSite=Strict cookie: the page bounces once through a same-site refresh
// instead of starting a new session or asking to sign in.
func TestCrossSiteLinkBouncesOnceForTheStrictCookie(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	q := e.ask("ops", domain.AskRequest{Question: "Ok?"})
	req, _ := http.NewRequest("GET", e.srv.URL+"/questions/"+q.ID, nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b := new(strings.Builder)
	_, _ = bufio.NewReader(res.Body).WriteTo(b)
	if res.StatusCode != 200 || !strings.Contains(b.String(), `http-equiv="refresh" content="0;url=/questions/`+q.ID) || res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("status %d cookie %q: %s", res.StatusCode, res.Header.Get("Set-Cookie"), b)
	}
	// The same-site refresh, still without a cookie, goes to sign-in.
	p := e.client().getPage("/questions/" + q.ID)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/login") {
		t.Fatalf("status %d location %q", p.status, p.location)
	}
}

func TestFinalStatesOnTheQuestionPage(t *testing.T) {
	clock := &testClock{now: time.Now().UTC()}
	e := newEnv(t, envOptions{clock: clock})
	ctx := context.Background()
	expiring := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "Expire me?", Timeout: dur(10 * time.Second)})
	old := e.ask("ops", domain.AskRequest{RunID: "r2", Question: "Old question?"})
	newer := e.ask("ops", domain.AskRequest{RunID: "r2", Question: "Newer question?"}) // supersedes old
	withdrawn := e.ask("ops", domain.AskRequest{RunID: "r3", Question: "Withdraw me?"})
	if _, err := e.router.Cancel(ctx, "ops", withdrawn.ID, domain.CancelAgent, nil); err != nil {
		t.Fatal(err)
	}
	clock.add(11 * time.Second)
	if n, err := e.router.ExpireDue(ctx); err != nil || n != 1 {
		t.Fatalf("expired %d: %v", n, err)
	}
	c := e.client()
	for q, want := range map[*domain.Question]string{
		expiring:  "Expired without an answer",
		old:       "Replaced by a newer question of the same run",
		withdrawn: "Withdrawn by the agent",
	} {
		p := c.getPage("/questions/" + q.ID)
		if p.status != 200 || !strings.Contains(p.body, want) || strings.Contains(p.body, `class="answer"`) {
			t.Errorf("%s: status %d, want %q and no form", q.Questions[0].Question, p.status, want)
		}
	}
	inbox := c.getPage("/")
	if !strings.Contains(inbox.body, newer.ID) || strings.Contains(inbox.body, expiring.ID) || strings.Contains(inbox.body, old.ID) {
		t.Error("the inbox should list only the newer question")
	}
	if p := c.getPage("/questions/not-a-question"); p.status != http.StatusNotFound {
		t.Errorf("unknown id: status %d", p.status)
	}
}
