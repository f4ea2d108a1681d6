package telegram

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
	"github.com/askbridge/askbridge/domain"
)

// adminCalls counts getChatAdministrators calls the fake answered with 200.
func adminCalls(f *faketelegram.Server) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Method == "getChatAdministrators" && c.Status == http.StatusOK {
			n++
		}
	}
	return n
}

// A route whose responders name telegram_chat_admins admits the chat's
// administrators (read with getChatAdministrators, cached), refuses
// everyone else with who may answer, and refuses an administrator too when
// Telegram will not say who administers the chat — saying so.
func TestChatAdminsAnswer(t *testing.T) {
	e := newEnv(t)
	e.fake.SetAdmins(alice.ID)
	chat := strconv.FormatInt(faketelegram.Group, 10)
	req := authAsk()
	req.Responders = &domain.Responders{Groups: map[string][]string{GroupKind: {chat}}}
	q := e.ask(req)
	m := e.msg(q)
	status := func() domain.Status {
		got, err := e.router.Question(context.Background(), "ops", q.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}

	// Telegram is down: the administrator is refused, told why, nothing recorded.
	e.fake.Fail("getChatAdministrators", http.StatusInternalServerError, e.ad.cfg.RetryAttempts) // every retry fails
	e.press(alice, m, e.button(m, "API key"))
	ts := e.fake.Toasts(alice.ID)
	if len(ts) != 1 || !ts[0].Alert || !strings.Contains(ts[0].Text, "did not say who administers this chat") {
		t.Fatalf("with the API down the admin was not refused with the reason: %+v", ts)
	}
	if st := status(); st != domain.StatusPending {
		t.Fatalf("with the API down a press was admitted: %s", st)
	}

	// A member who is not an administrator is refused, told who may answer.
	e.press(mallory, m, e.button(m, "API key"))
	ts = e.fake.Toasts(mallory.ID)
	if len(ts) != 1 || !ts[0].Alert {
		t.Fatalf("a non-admin was not refused: %+v", ts)
	}
	full := ts[0].Text
	if dm := e.fake.Messages(mallory.ID); len(dm) > 0 {
		full = dm[len(dm)-1].Text
	}
	if !strings.Contains(full, "administrators of Telegram chat "+chat) {
		t.Errorf("the refusal does not say who may answer: %q", full)
	}
	if st := status(); st != domain.StatusPending {
		t.Fatalf("a non-admin's press was admitted: %s", st)
	}

	// The administrator answers; the list read for mallory is reused.
	e.press(alice, m, e.button(m, "API key"))
	got, _ := e.router.Question(context.Background(), "ops", q.ID)
	if got.Status != domain.StatusAnswered || got.Response != "API key" || got.RespondedBy.Key() != "telegram:1001" {
		t.Fatalf("the admin's press: %s %q by %v", got.Status, got.Response, got.RespondedBy)
	}
	if n := adminCalls(e.fake); n != 1 {
		t.Errorf("getChatAdministrators answered %d times for two presses within a minute, want 1 (cached)", n)
	}
}
