package lifecycle

import (
	"context"
	"encoding/json"

	"github.com/askbridge/askbridge/domain"
)

// autoRule returns the rule that approves q without asking (route rules,
// or an always-allow decision earlier in its run), or "".
func (r *Router) autoRule(ctx context.Context, project string, q *domain.Question, route *domain.Route) string {
	var rules []string
	if route != nil {
		rules = route.AutoAllow
	}
	return domain.AutoAllowRule(q, rules, func() []*domain.Question {
		earlier, err := r.store.RunQuestions(ctx, project, q.RunID)
		if err != nil {
			return nil
		}
		return earlier
	})
}

// autoApprove answers q by rule, as AutoPerson, and audits why.
func (r *Router) autoApprove(ctx context.Context, q *domain.Question, rule string) (*domain.Question, error) {
	ans := domain.AutoApproval(q, rule)
	by := domain.AutoPerson
	final, err := r.transition(ctx, q, Transition{To: domain.StatusAnswered, Answer: &ans, By: &by})
	if err != nil {
		return final, err
	}
	r.audit(ctx, final, domain.AuditEntry{Type: "auto_approved", By: &by, Detail: rule})
	return final, nil
}

// auditApproval adds the approval lines of an answer to the audit trail:
// "edited" with the asked and the approved arguments and who edited, and
// "always_allowed" with the chosen rule.
func (r *Router) auditApproval(ctx context.Context, final, asked *domain.Question, ans *domain.Answer) {
	if ans.Edited != nil {
		orig := domain.EditedAction{Tool: asked.Action.Tool, Input: asked.Action.Input, Digest: asked.Action.Digest}
		ed := *ans.Edited
		ed.By = nil
		b, _ := json.Marshal(map[string]any{"original": orig, "edited": ed})
		r.audit(ctx, final, domain.AuditEntry{Type: "edited", By: ans.Edited.By, Detail: string(b)})
	}
	if ans.AppliedRule != nil && ans.Decision != nil && len(ans.Decision.Rules) > 0 {
		r.audit(ctx, final, domain.AuditEntry{Type: "always_allowed", By: final.RespondedBy, Detail: string(ans.Decision.Rules[0])})
	}
}
