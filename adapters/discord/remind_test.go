package discord

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// A reminder naming more responders than 2,000 characters hold keeps its
// sentence, cuts between mentions (never inside one), says how many more
// may answer, and allows exactly the mentions it shows.
func TestReminderNamingManyRespondersCutsBetweenMentions(t *testing.T) {
	f := fakediscord.New(t)
	clock := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	f.Now = clock.Now
	var roles, users []string
	for i := range 100 {
		roles = append(roles, fmt.Sprintf("1000000000000000%02d", i))
		users = append(users, fmt.Sprintf("discord:2000000000000000%02d", i))
	}
	e := newEnv(t, f, newTestStore(t), withClock(clock), func(rc *lifecycle.RouterConfig, _ *Config) {
		rc.Routes = append(rc.Routes, domain.Route{Name: "crowd", Timeout: time.Hour,
			Targets:    []domain.Target{{Platform: "discord", Channel: "1000"}},
			Responders: domain.Responders{Groups: map[string][]string{"discord_roles": roles}, Users: users},
			Escalation: []domain.EscalationStep{{After: domain.Duration(15 * time.Minute), Remind: true}}})
	})
	q := e.ask(&domain.AskRequest{RunID: "run-9", Route: "crowd", Questions: []domain.Item{authItem()}})
	copyID := e.copyOf(q)
	clock.Add(15 * time.Minute)
	if n, err := e.router.EscalateDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("EscalateDue ran %d steps (%v), want the reminder", n, err)
	}
	var reminder *fakediscord.Message
	for _, m := range f.Messages(f.Message(copyID).ChannelID) {
		if m.ReplyTo == copyID {
			reminder = &m
		}
	}
	if reminder == nil {
		t.Fatal("no reminder was posted")
	}
	c := reminder.Content
	if n := utf8.RuneCountInString(c); n > 2000 {
		t.Errorf("the reminder holds %d characters, Discord takes 2000", n)
	}
	if !strings.Contains(c, "Still waiting for an answer — expires in 45 min.") {
		t.Errorf("the reminder lost its sentence: %q", c)
	}
	if !regexp.MustCompile(`^(<@&?\d+> )+(and \d+ more )?Still waiting`).MatchString(c) {
		t.Errorf("the reminder is cut inside a mention or out of order: %q", c)
	}
	shown := regexp.MustCompile(`<@(&?)(\d+)>`).FindAllStringSubmatch(c, -1)
	var shownRoles, shownUsers []string
	for _, m := range shown {
		if m[1] == "&" {
			shownRoles = append(shownRoles, m[2])
		} else {
			shownUsers = append(shownUsers, m[2])
		}
	}
	if len(shown) < 30 {
		t.Errorf("only %d mentions shown; as many as fit should be", len(shown))
	}
	if more := 200 - len(shown); !strings.Contains(c, fmt.Sprintf("and %d more", more)) {
		t.Errorf("the reminder does not say %d more may answer: %q", more, c)
	}
	if !slices.Equal(reminder.AllowedRoles, shownRoles) || !slices.Equal(reminder.AllowedUsers, shownUsers) {
		t.Errorf("allowed_mentions roles %d users %d, shown roles %d users %d: they must be the same",
			len(reminder.AllowedRoles), len(reminder.AllowedUsers), len(shownRoles), len(shownUsers))
	}
	if len(reminder.Pings) != len(shown) {
		t.Errorf("pinged %d, shown %d", len(reminder.Pings), len(shown))
	}
}
