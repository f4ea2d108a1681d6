package email

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// What mail scanners do to every link of a mail (Microsoft Safe Links,
// Mimecast, Proofpoint, Google's image proxy, browsers' prefetch): none
// of it may answer.
func TestScannerProbesDecideNothing(t *testing.T) {
	e := newEnv(t)
	q := e.ask(deployApproval())
	mail := e.mailsTo(ana)[0]
	ls := links(mail)
	if len(ls) != 2 {
		t.Fatalf("links %v", ls)
	}
	allow := ls[0]
	base, tok, _ := strings.Cut(allow, linkPath)
	// A page a scanner fetched: its form token, with the scanner's cookie.
	scanner := e.browser()
	scanned := get(t, scanner, allow)
	csrf := htmlUnescape(csrfRe.FindStringSubmatch(scanned.body)[1])

	type probe struct {
		name   string
		method string
		link   string
		header map[string]string
		form   url.Values
		client func() *http.Client
		times  int
		status int // what the probe gets
	}
	fresh := e.browser
	flip := func(s string, i int) string { // another character at position i
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	// The same bytes spelled with other unused low bits in the last
	// character: a lenient decoder would take it.
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	lowBits := ""
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" {
		alt := tok[:len(tok)-1] + string(c)
		if b, err := base64.RawURLEncoding.DecodeString(alt); err == nil && alt != tok && string(b) == string(raw) {
			lowBits = alt
			break
		}
	}
	probes := []probe{
		{name: "GET", method: "GET", link: allow, status: 200},
		{name: "HEAD", method: "HEAD", link: allow, status: 200},
		{name: "Safe Links-like user agent", method: "GET", link: allow, status: 200,
			header: map[string]string{"User-Agent": "Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0; SLCC2) BingPreview/1.0b"}},
		{name: "prefetch (Sec-Purpose, Purpose, X-Moz)", method: "GET", link: allow, status: 200,
			header: map[string]string{"Sec-Purpose": "prefetch", "Purpose": "prefetch", "X-Moz": "prefetch"}},
		{name: "image proxy", method: "GET", link: allow, status: 200,
			header: map[string]string{"User-Agent": "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)", "Accept": "image/webp,image/*,*/*;q=0.8"}},
		{name: "repeated GET", method: "GET", link: allow, times: 5, status: 200},
		{name: "repeated HEAD", method: "HEAD", link: allow, times: 5, status: 200},
		{name: "OPTIONS", method: "OPTIONS", link: allow, status: 405},
		{name: "PUT", method: "PUT", link: allow, status: 405},
		{name: "POST without cookie or form token", method: "POST", link: allow, form: url.Values{}, status: 403},
		{name: "POST with a forged form token", method: "POST", link: allow, form: url.Values{"csrf": {"Zm9yZ2Vk"}}, client: func() *http.Client { return scanner }, status: 403},
		{name: "POST with the scanned page's form token but no cookie", method: "POST", link: allow, form: url.Values{"csrf": {csrf}}, status: 403},
		{name: "POST of the Deny link with the Allow page's token and cookie", method: "POST", link: ls[1], form: url.Values{"csrf": {csrf}}, client: func() *http.Client { return scanner }, status: 403},
		{name: "GET of a tampered link (one character changed)", method: "GET", link: base + linkPath + flip(tok, 10), status: 403},
		{name: "POST of a tampered link", method: "POST", link: base + linkPath + flip(tok, len(tok)/2), form: url.Values{"csrf": {csrf}}, client: func() *http.Client { return scanner }, status: 403},
		{name: "GET of the link cut short", method: "GET", link: base + linkPath + tok[:len(tok)-4], status: 403},
		{name: "GET with padding added", method: "GET", link: base + linkPath + tok + "==", status: 403},
		{name: "GET of a link with other unused low bits", method: "GET", link: base + linkPath + lowBits, status: 403},
		{name: "POST of a link with other unused low bits", method: "POST", link: base + linkPath + lowBits, form: url.Values{"csrf": {csrf}}, client: func() *http.Client { return scanner }, status: 403},
		{name: "GET of the link with the recipient changed", method: "GET", link: base + linkPath + swapRecipient(t, tok, ana, "ann@example.com"), status: 403},
	}
	if lowBits == "" {
		t.Fatal("no other spelling of the token found; the probe would test nothing")
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			n := max(p.times, 1)
			for range n {
				c := fresh()
				if p.client != nil {
					c = p.client()
				}
				var req *http.Request
				if p.form != nil {
					req, _ = http.NewRequest(p.method, p.link, strings.NewReader(p.form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				} else {
					req, _ = http.NewRequest(p.method, p.link, nil)
				}
				for k, v := range p.header {
					req.Header.Set(k, v)
				}
				got := do(t, c, req)
				if got.status != p.status {
					t.Errorf("status %d, want %d\n%s", got.status, p.status, got.body)
				}
				if got.status == 200 && p.method == "GET" {
					checkPageHeaders(t, got)
					if !strings.Contains(got.body, "<button") {
						t.Error("the page has no button a person could press")
					}
				}
			}
			if s := e.question(q.ID).Status; s != domain.StatusPending {
				t.Fatalf("the probe decided the question: %s", s)
			}
		})
	}
	audit, err := e.st.Audit(t.Context(), "ops", q.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range audit {
		if a.Type != "asked" && a.Type != "posted" && a.Type != "delivery.sent" {
			t.Errorf("the probes left an audit entry %q", a.Type)
		}
	}
	// And after all that, the person can still answer.
	if p := confirm(t, e.browser(), allow, nil); p.status != http.StatusOK {
		t.Fatalf("the person's answer: %d\n%s", p.status, p.body)
	}
	if s := e.question(q.ID).Status; s != domain.StatusAnswered {
		t.Fatalf("status %s", s)
	}
}

func checkPageHeaders(t *testing.T, p page) {
	t.Helper()
	for k, want := range map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex"} {
		if !strings.Contains(p.header.Get(k), want) {
			t.Errorf("%s: %q, want %q", k, p.header.Get(k), want)
		}
	}
	csp := p.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q must allow no script", csp)
	}
	if strings.Contains(strings.ToLower(p.body), "<script") || strings.Contains(strings.ToLower(p.body), " on") && strings.Contains(p.body, "onload=") {
		t.Error("the page holds a script")
	}
}

// swapRecipient re-spells tok with another recipient, keeping the
// signature: what someone editing a link would try.
func swapRecipient(t *testing.T, tok, from, to string) string {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), from, to, 1)
	if s == string(b) {
		t.Fatal("recipient not found in the token")
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func TestTokensHaveOneSpelling(t *testing.T) {
	k := deriveKeys([]byte(linkKey))
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	// Many tokens, so every length modulo 3 and every final character
	// occurs: a lenient decoder fails this test in most runs, not 1 in 10.
	for i := range 120 {
		tok, err := k.sign(token{Question: strings.Repeat("q", 30+i%7), Choice: i%5 - 1, Recipient: ana, Expires: exp})
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.verify(tok)
		if err != nil || got.Recipient != ana || got.Choice != i%5-1 || !got.Expires.Equal(exp) {
			t.Fatalf("round trip: %+v %v", got, err)
		}
		for _, pos := range []int{0, 1, 5, 13, 21, len(tok) / 2, len(tok) - 3, len(tok) - 2, len(tok) - 1} {
			for _, c := range alphabet {
				if byte(c) == tok[pos] {
					continue
				}
				alt := tok[:pos] + string(c) + tok[pos+1:]
				if _, err := k.verify(alt); err == nil {
					t.Fatalf("a token with %q at %d (was %q) verifies", c, pos, tok[pos])
				}
			}
		}
		for _, alt := range []string{tok + "A", tok[:len(tok)-1], tok + "=", " " + tok, strings.ToUpper(tok)} {
			if alt == tok {
				continue
			}
			if _, err := k.verify(alt); err == nil {
				t.Fatalf("%q verifies", alt)
			}
		}
	}
}

func FuzzVerify(f *testing.F) {
	k := deriveKeys([]byte(linkKey))
	tok, _ := k.sign(token{Question: "q1", Choice: 1, Recipient: ana, Expires: time.Unix(2e9, 0)})
	f.Add(tok)
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := k.verify(s)
		if err != nil {
			return
		}
		// Whatever verifies signs back to the very same spelling.
		again, err := k.sign(got)
		if err != nil || again != s {
			t.Fatalf("%q verified but signs back as %q (%v)", s, again, err)
		}
	})
}
