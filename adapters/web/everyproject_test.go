package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// An operator of every project (projects: ["*"], as the API reads it)
// sees and answers every project's questions in the inbox, as the API
// lets them.
func TestOperatorOfEveryProjectSeesEveryProject(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	ops := e.ask("ops", domain.AskRequest{Question: "Ops question?"})
	webq := e.ask("web", domain.AskRequest{Question: "Web question?"})
	c := e.client()
	c.login("tok-root-0123456789")
	inbox := c.getPage("/")
	if !strings.Contains(inbox.body, ops.ID) || !strings.Contains(inbox.body, webq.ID) {
		t.Fatalf("the inbox of an operator of every project lists ops %v, web %v",
			strings.Contains(inbox.body, ops.ID), strings.Contains(inbox.body, webq.ID))
	}
	for project, q := range map[string]*domain.Question{"ops": ops, "web": webq} {
		if p := c.getPage("/questions/" + q.ID); p.status != http.StatusOK {
			t.Fatalf("question of project %s: status %d", project, p.status)
		}
		if p := c.getPage("/projects/" + project + "/runs/" + q.RunID); p.status != http.StatusOK {
			t.Fatalf("run of project %s: status %d", project, p.status)
		}
	}
	p := c.post("/questions/"+webq.ID+"/answer", url.Values{"csrf": {c.csrf("/")}, "t0": {"fine"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", p.status, p.body)
	}
	if by := e.get("web", webq.ID).RespondedBy; by == nil || by.ID != "root" {
		t.Fatalf("responded_by %+v", by)
	}
}
