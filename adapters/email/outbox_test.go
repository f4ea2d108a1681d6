package email

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// auditOf returns the question's audit entries "type: detail".
func (e *env) auditOf(id string) string {
	e.t.Helper()
	entries, err := e.st.Audit(context.Background(), "ops", id, 200)
	if err != nil {
		e.t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range entries {
		b.WriteString(a.Type + ": " + a.Detail + "\n")
	}
	return b.String()
}

func (e *env) waitAudit(id, want string) string {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := e.auditOf(id)
		if strings.Contains(got, want) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestATemporarilyFailingServerIsRetriedThroughTheQueue(t *testing.T) {
	e := newEnv(t)
	e.smtp.Fail(451, 3) // three attempts answered "try again later"
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}, Targets: []domain.Target{emailTarget(ana)}})
	if ms := e.waitMails(ana, 1); len(ms) != 1 {
		t.Fatalf("the mail did not arrive after the server recovered: %d mails\n%s", len(ms), e.logs.String())
	}
	audit := e.waitAudit(q.ID, "delivery.sent")
	if !strings.Contains(audit, "delivery.sent: email.send (attempt 4") {
		t.Errorf("audit:\n%s", audit)
	}
	if strings.Contains(e.logs.String(), smtpPass) {
		t.Error("the SMTP password is in the log")
	}
}

func TestAPermanentRefusalIsAuditedAndNotRetried(t *testing.T) {
	e := newEnv(t)
	e.smtp.Unknown(ana)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	audit := e.waitAudit(q.ID, "delivery.failed")
	if !strings.Contains(audit, "delivery.failed: email.send: the mail server refused the mail (550") || !strings.Contains(audit, ana) {
		t.Fatalf("audit:\n%s", audit)
	}
	if !strings.Contains(e.logs.String(), "delivery failed for good") {
		t.Error("a refused mail is not logged as an error")
	}
	if len(e.mailsTo(bob)) != 1 {
		t.Error("bob's mail did not go out")
	}
	// The outcome goes to bob's thread only: ana's question mail never left.
	if _, err := e.router.Answer(context.Background(), "ops", q.ID, pick("API key"), domain.Person{Platform: "api", ID: "local"}); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if ms := e.waitMails(bob, 2); len(ms) != 2 || !strings.Contains(ms[1].Parts()["text/plain"], "Answered by local on the API: API key") {
		t.Fatalf("bob's outcome: %d mails", len(ms))
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(e.sentTo(ana)); n != 0 {
		t.Errorf("ana got %d mails", n)
	}
	if n := strings.Count(e.auditOf(q.ID), "delivery.failed"); n != 1 {
		t.Errorf("%d failures audited, want the one refusal (the outcome to ana is dropped quietly)", n)
	}
}

func TestAMailIsQueuedOnceWhateverTheRetriesOrReplicas(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}, Targets: []domain.Target{emailTarget(ana)}})
	q = e.question(q.ID)
	for range 3 { // the Router retrying a post, another replica posting
		if _, err := e.ad.Post(context.Background(), q, q.Targets[0]); err != nil {
			t.Fatal(err)
		}
	}
	e.mailsTo(ana)
	time.Sleep(300 * time.Millisecond)
	if n := len(e.sentTo(ana)); n != 1 {
		t.Errorf("%d mails, want 1", n)
	}
}
