package domain

import (
	"testing"
	"time"
	"unicode/utf8"
)

func TestShorten(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"OAuth 2.0", 80, "OAuth 2.0"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"héllo wörld", 7, "héllo…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		got := Shorten(c.in, c.max)
		if got != c.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		if utf8.RuneCountInString(got) > c.max {
			t.Errorf("Shorten(%q, %d) is %d runes", c.in, c.max, utf8.RuneCountInString(got))
		}
	}
}

func TestOutcomeLine(t *testing.T) {
	alice := &Person{Platform: "discord", ID: "1", Name: "alice"}
	one := []Item{{Question: "Which auth method?", Header: "Auth"}}
	two := []Item{{Question: "Which auth method?", Header: "Auth"}, {Question: "Which features?"}}
	cases := []struct {
		q    Question
		want string
	}{
		{Question{Status: StatusAnswered, Questions: one, RespondedBy: alice,
			Answers: map[string]string{"Which auth method?": "OAuth 2.0"}}, "Answered by alice: OAuth 2.0"},
		{Question{Status: StatusAnswered, Questions: two, RespondedBy: alice,
			Answers: map[string]string{"Which auth method?": "OAuth 2.0", "Which features?": "Login, Dashboard"}},
			"Answered by alice: Auth: OAuth 2.0; Which features?: Login, Dashboard"},
		{Question{Status: StatusExpired}, "Expired"},
		{Question{Status: StatusCancelled, CancelReason: CancelSuperseded}, "Cancelled (superseded)"},
		{Question{Status: StatusCancelled, CancelReason: CancelUser, RespondedBy: alice}, "Dismissed by alice"},
		{Question{Status: StatusPending}, ""},
	}
	for _, c := range cases {
		if got := OutcomeLine(&c.q); got != c.want {
			t.Errorf("OutcomeLine(%s) = %q, want %q", c.q.Status, got, c.want)
		}
	}
	q := &Question{ExpiresAt: time.Date(2025, 1, 1, 12, 30, 0, 0, time.UTC)}
	if got := ExpiresPhrase(q, time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)); got != "expires in 30 min" {
		t.Errorf("ExpiresPhrase = %q", got)
	}
}

func TestPlatformWords(t *testing.T) {
	for _, c := range []struct{ p, name, on string }{
		{"slack", "Slack", "on Slack"},
		{"discord", "Discord", "on Discord"},
		{"telegram", "Telegram", "on Telegram"},
		{"web", "web inbox", "on the web inbox"},
		{"api", "API", "on the API"},
		{"cli", "CLI", "on the CLI"},
		{"email", "Email", "by email"},
		{"matrix", "Matrix", "on Matrix"},
	} {
		if got := PlatformName(c.p); got != c.name {
			t.Errorf("PlatformName(%q) = %q, want %q", c.p, got, c.name)
		}
		if got := OnPlatform(c.p); got != c.on {
			t.Errorf("OnPlatform(%q) = %q, want %q", c.p, got, c.on)
		}
	}
}
