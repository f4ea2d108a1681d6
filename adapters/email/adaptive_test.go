package email

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/askbridge/askbridge/domain"
)

// defaultsAsk has a condition the defaults decide: Regions is asked under
// them, Key name is not (so its having no default does not matter).
func defaultsAsk() domain.AskRequest {
	return domain.AskRequest{Questions: []domain.Item{
		{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{{Label: "OAuth 2.0", Default: true}, {Label: "API key"}}},
		{Question: "Which regions?", Header: "Regions", MultiSelect: true,
			Options: []domain.Option{{Label: "eu-west", Default: true}, {Label: "us-east"}, {Label: "ap-south", Default: true}},
			ShowIf:  &domain.ShowIf{Item: 0, NoneOf: []string{"API key"}}},
		{Question: "Which key name?", Header: "Key", ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"API key"}}},
	}}
}

// A mail of several items offers "Submit the defaults" beside Answer: its
// link opens a page that says which defaults it sends and decides nothing;
// the page's button records them once, for the recipient, the hidden item
// skipped. The Answer form has the defaults of items asked without a
// condition checked.
func TestDefaultsLinkAnswersWithTheDefaults(t *testing.T) {
	e := newEnv(t)
	q := e.ask(defaultsAsk())
	m := e.mailsTo(ana)[0]
	text, htmlPart := m.Parts()["text/plain"], m.Parts()["text/html"]
	for _, want := range []string{"OAuth 2.0 (default)", "Submit the defaults (Auth: OAuth 2.0; Regions: eu-west, ap-south): "} {
		if !strings.Contains(text, want) {
			t.Errorf("the text part lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(htmlPart, "Submit the defaults</a>") || !strings.Contains(htmlPart, "The defaults: Auth: OAuth 2.0; Regions: eu-west, ap-south") {
		t.Errorf("the HTML part offers no defaults link:\n%s", htmlPart)
	}
	ls := links(m)
	if len(ls) != 2 {
		t.Fatalf("want the Answer and the defaults links, got %v", ls)
	}
	form := get(t, e.browser(), ls[0])
	if !strings.Contains(form.body, `name="i0" value="0" checked>`) || strings.Contains(form.body, `name="i0" value="1" checked>`) {
		t.Errorf("the Answer form does not check the default:\n%s", form.body)
	}
	// A conditional item's defaults are not checked: the page cannot hide
	// the item when API key leaves it out, and they would be refused.
	if strings.Contains(form.body, `name="i1" value="0" checked>`) {
		t.Errorf("the Answer form checks the defaults of a conditional item:\n%s", form.body)
	}

	b := e.browser()
	p := get(t, b, ls[1])
	if p.status != http.StatusOK || !strings.Contains(p.body, "the defaults — Auth: OAuth 2.0; Regions: eu-west, ap-south") ||
		!strings.Contains(p.body, "Send the defaults") {
		t.Fatalf("the defaults page: %d\n%s", p.status, p.body)
	}
	if e.question(q.ID).Status != domain.StatusPending {
		t.Fatal("opening the defaults link decided the question")
	}
	p = confirm(t, b, ls[1], nil)
	if p.status != http.StatusOK {
		t.Fatalf("pressing Send the defaults: %d\n%s", p.status, p.body)
	}
	got := e.question(q.ID)
	if got.Status != domain.StatusAnswered || got.RespondedBy == nil || got.RespondedBy.Key() != "email:"+ana {
		t.Fatalf("after the defaults: %s by %v", got.Status, got.RespondedBy)
	}
	if got.Answers["Which auth method?"] != "OAuth 2.0" || got.Answers["Which regions?"] != "eu-west, ap-south" || len(got.Answers) != 2 {
		t.Errorf("answers %v", got.Answers)
	}
	if len(got.Skipped) != 1 || got.Skipped[0].Question != "Which key name?" {
		t.Errorf("skipped %v", got.Skipped)
	}
	// Bob's defaults link, after ana answered: told so, nothing changes.
	p = get(t, e.browser(), links(e.mailsTo(bob)[0])[1])
	if p.status != http.StatusGone || !strings.Contains(p.body, "Answered by ana@example.com") || e.question(q.ID).RespondedBy.Key() != "email:"+ana {
		t.Errorf("bob's defaults after ana's answer: %d\n%s", p.status, p.body)
	}
}

// Someone the responders do not name is refused on the page, and nothing
// is recorded; a question whose items asked lack a default offers no
// defaults link, and a forged defaults link for it is refused.
func TestDefaultsLinkRespondersAndMissingDefaults(t *testing.T) {
	e := newEnv(t)
	req := defaultsAsk()
	req.Targets = []domain.Target{emailTarget(ana, carol)}
	req.Responders = &domain.Responders{Users: []string{"email:" + ana}}
	q := e.ask(req)
	p := confirm(t, e.browser(), links(e.mailsTo(carol)[0])[1], nil)
	if p.status != http.StatusForbidden || !strings.Contains(p.body, domain.TitleNotAllowed) {
		t.Errorf("carol, who may not answer: %d\n%s", p.status, p.body)
	}
	if e.question(q.ID).Status != domain.StatusPending {
		t.Fatal("a refused defaults answer was recorded")
	}

	q2 := e.ask(domain.AskRequest{RunID: "run-2", Questions: []domain.Item{
		{Question: "Which auth method?", Options: []domain.Option{{Label: "OAuth 2.0", Default: true}, {Label: "API key"}}},
		{Question: "Which regions?", MultiSelect: true, Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}}}}})
	ms := e.waitMails(ana, 2)
	m := ms[len(ms)-1]
	if ls := links(m); len(ls) != 1 || strings.Contains(m.Parts()["text/plain"], "Submit the defaults") {
		t.Errorf("a question with an item asked without a default offers defaults: %v\n%s", ls, m.Parts()["text/plain"])
	}
	tok, err := e.ad.keys.sign(token{Question: q2.ID, Choice: DefaultsChoice, Recipient: ana, Expires: q2.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	p = get(t, e.browser(), e.web.URL+linkPath+tok)
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "no default for every item asked") {
		t.Errorf("a defaults link for a question without them: %d\n%s", p.status, p.body)
	}
	if e.question(q2.ID).Status != domain.StatusPending {
		t.Fatal("recorded")
	}
}

// Pictures: a host in web.image_hosts is an <img> with its alt text; any
// other host is a link with its alt text, never an img src; the text part
// names each picture by its alt text and URL. Agent text stays text.
func TestMailPicturesOnlyFromListedHosts(t *testing.T) {
	e := newEnv(t)
	e.ad.cfg.ImageHosts = []string{"img.example.com", "*.cdn.example.com"}
	q := e.ask(domain.AskRequest{Context: "Which layout?",
		ContextImage: &domain.Image{URL: "https://img.example.com/layouts.png", Alt: "two layouts side by side"},
		Questions: []domain.Item{{Question: "Which layout?", Header: "Layout",
			Image: &domain.Image{URL: "https://tracker.example.net/item.png?u=1", Alt: `the item "<b>picture</b>"`},
			Options: []domain.Option{
				{Label: "Grid", Image: &domain.Image{URL: "https://a.cdn.example.com/grid.png", Alt: "a 3 by 3 grid"}},
				{Label: "List", Image: &domain.Image{URL: "https://evil.example.org/list.png", Alt: "a list <script>x()</script>"}}}}}})
	_ = q
	m := e.mailsTo(ana)[0]
	doc, err := html.Parse(strings.NewReader(m.Parts()["text/html"]))
	if err != nil {
		t.Fatal(err)
	}
	imgs := map[string]string{} // src → alt
	anchors := map[string]string{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch n.Data {
			case "img":
				imgs[attr["src"]] = attr["alt"]
			case "a":
				anchors[attr["href"]] = textOf(n)
			case "script":
				t.Errorf("a script element in the mail")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	want := map[string]string{"https://img.example.com/layouts.png": "two layouts side by side", "https://a.cdn.example.com/grid.png": "a 3 by 3 grid"}
	if len(imgs) != len(want) {
		t.Errorf("img elements %v, want %v", imgs, want)
	}
	for src, alt := range want {
		if imgs[src] != alt {
			t.Errorf("img %s has alt %q, want %q", src, imgs[src], alt)
		}
	}
	for src := range imgs {
		if u, _ := url.Parse(src); u == nil || !slices.Contains([]string{"img.example.com", "a.cdn.example.com"}, u.Hostname()) {
			t.Errorf("an img from a host not listed: %s", src)
		}
	}
	for href, text := range map[string]string{"https://tracker.example.net/item.png?u=1": `Picture: the item "<b>picture</b>"`,
		"https://evil.example.org/list.png": "Picture: a list <script>x()</script>"} {
		if anchors[href] != text {
			t.Errorf("the picture %s is not a link with its alt text: %q (links %v)", href, anchors[href], anchors)
		}
	}
	text := m.Parts()["text/plain"]
	for _, w := range []string{"[picture: two layouts side by side] https://img.example.com/layouts.png",
		"[picture: a 3 by 3 grid] https://a.cdn.example.com/grid.png", "[picture: a list <script>x()</script>] https://evil.example.org/list.png"} {
		if !strings.Contains(text, w) {
			t.Errorf("the text part lacks %q:\n%s", w, text)
		}
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// In a real mail server: the mail with pictures and defaults passes
// Mailpit's HTML check, its only img is from the listed host, and the
// defaults link from the stored mail answers with the defaults.
func TestMailpitPicturesAndDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Mailpit")
	}
	mp := startMailpit(t)
	e := newEnvSMTP(t, "smtp+insecure://bridge@"+mp.smtp, "any-password", nil)
	e.ad.cfg.ImageHosts = []string{"img.example.com"}
	req := defaultsAsk()
	req.Targets = []domain.Target{emailTarget(ana)}
	req.ContextImage = &domain.Image{URL: "https://img.example.com/arch.png", Alt: "the architecture"}
	req.Questions[0].Options[1].Image = &domain.Image{URL: "https://elsewhere.example.net/key.png", Alt: "a key"}
	q := e.ask(req)
	s := mp.wait(1)[0]
	m := mp.message(s.ID)
	var check struct {
		Warnings []struct {
			Slug, Title, Category string
			Score                 struct{ Unsupported float32 }
		}
	}
	mp.json("/api/v1/message/"+s.ID+"/html-check", &check)
	for _, w := range check.Warnings {
		if w.Category == "html" || w.Score.Unsupported > 25 {
			t.Errorf("html-check: %s (%s) is unsupported by %.0f%% of mail programs", w.Slug, w.Title, w.Score.Unsupported)
		}
	}
	if n := strings.Count(m.HTML, "<img "); n != 1 || !strings.Contains(m.HTML, `<img src="https://img.example.com/arch.png" alt="the architecture"`) {
		t.Errorf("want one img, from the listed host (%d):\n%s", n, m.HTML)
	}
	if !strings.Contains(m.HTML, `<a href="https://elsewhere.example.net/key.png"`) || !strings.Contains(m.Text, "[picture: a key] https://elsewhere.example.net/key.png") {
		t.Errorf("the picture from a host not listed is not a link:\n%s\n%s", m.HTML, m.Text)
	}
	ls := linkRe.FindAllString(m.Text, -1)
	if len(ls) != 2 {
		t.Fatalf("links %v", ls)
	}
	if p := confirm(t, e.browser(), ls[1], nil); p.status != http.StatusOK {
		t.Fatalf("the defaults: %d\n%s", p.status, p.body)
	}
	if got := e.question(q.ID); got.Answers["Which regions?"] != "eu-west, ap-south" || got.RespondedBy.Key() != "email:"+ana {
		t.Errorf("recorded %v by %v", got.Answers, got.RespondedBy)
	}
}

// One single-select item: each option is its own link, so the default's
// link, marked (default), is the one action; no second defaults link.
func TestOneItemMarksTheDefaultsLink(t *testing.T) {
	e := newEnv(t)
	e.ask(domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Options: []domain.Option{{Label: "OAuth 2.0"}, {Label: "API key", Default: true}}}}})
	m := e.mailsTo(ana)[0]
	text := m.Parts()["text/plain"]
	if !strings.Contains(text, "* API key (default)") || strings.Contains(text, "Submit the defaults") || len(links(m)) != 2 {
		t.Errorf("want the default's own link marked and no defaults link:\n%s", text)
	}
	if !strings.Contains(m.Parts()["text/html"], "(default) ") {
		t.Error("the HTML part does not mark the default")
	}
}

// The mail names what the other surfaces show of a question that adapts:
// when a conditional item is asked, the rules of free text, and what was
// answered the last times.
func TestMailNamesConditionsRulesAndHistory(t *testing.T) {
	e := newEnv(t)
	req := defaultsAsk()
	req.Questions[2].Other = &domain.FreeTextRules{Pattern: "OPS-[0-9]+", MaxLength: 12, Hint: "a ticket id like OPS-123"}
	first := e.ask(req)
	if _, err := e.router.Answer(t.Context(), "ops", first.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
		"Which auth method?": {"API key"}, "Which key name?": {"OPS-7"}}}, domain.Person{Platform: "slack", ID: "U1", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	req.RunID = "run-2"
	e.ask(req)
	ms := e.waitMails(ana, 3) // the first question, its outcome, the second
	var m = ms[len(ms)-1]
	for _, x := range ms {
		if !strings.HasPrefix(x.Header().Get("Subject"), "Re: ") {
			m = x
		}
	}
	text, htmlPart := m.Parts()["text/plain"], m.Parts()["text/html"]
	for _, want := range []string{"Last time: API key; OPS-7 (maria, ", "Which regions? (choose one or more) (asked only if “Auth” is not API key)",
		"Which key name? (answer in your own words) (asked only if “Auth” is API key)",
		"Expected: a ticket id like OPS-123 (at most 12 characters, matching OPS-[0-9]+)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text part lacks %q:\n%s", want, text)
		}
	}
	for _, want := range []string{"Last time: API key; OPS-7 (maria, ", "(asked only if “Auth” is not API key)", "Expected: a ticket id like OPS-123"} {
		if !strings.Contains(htmlPart, want) {
			t.Errorf("the HTML part lacks %q", want)
		}
	}
}
