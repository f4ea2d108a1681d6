package lifecycle

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// A pager (PagerDuty) wakes people for a question and tells the bridge back
// when a person acknowledged the page or resolved it in the pager. These
// are the Router's side of what it tells.

// ackKey marks a question whose page was acknowledged, readable from any
// replica (Scratch.Marked).
func ackKey(project, id string) string { return "page-ack:" + project + ":" + id }

// Kinds of the remarks a pager's news leaves on a question's copies.
const (
	RemarkPageAcknowledged = "page.acknowledged"
	RemarkPageResolved     = "page.resolved"
)

// PageAcknowledged records that by acknowledged q's page in pager at at
// (zero: now): every copy says so (a remark), the audit trail too, and
// the escalation ladder stops paging and posting further copies for q
// (its reminders continue; responders a step adds still count, as the
// record derives them from the step reached). ENotFound for a question
// the bridge does not know or never paged through pager (its route does
// not page, and no escalation step it reached did): nothing is recorded;
// a question no longer pending is left alone. Repeats (a pager's
// retries) change nothing.
func (r *Router) PageAcknowledged(ctx context.Context, id, pager, by string, at time.Time) error {
	q, err := r.pageQuestion(ctx, id, pager)
	if err != nil || q.Status != domain.StatusPending {
		return err
	}
	ttl := q.ExpiresAt.Sub(r.clock.Now()) + time.Minute
	if ttl < time.Minute {
		ttl = time.Minute
	}
	first, err := r.store.Once(ctx, ackKey(q.ProjectID, q.ID), ttl)
	if err != nil {
		return err
	}
	if first {
		r.audit(ctx, q, domain.AuditEntry{Type: "page.acknowledged", By: &domain.Person{Platform: "pager", ID: by, Name: by},
			Detail: "acknowledged by " + by + " in " + pager + "; further escalation steps only remind"})
	}
	at = r.pagerTime(at)
	return r.remark(ctx, q, domain.Remark{Kind: RemarkPageAcknowledged, By: by, At: at,
		Text: "Acknowledged by " + by + " in " + pager + " at " + at.Format("15:04") + " UTC"})
}

// PageResolved records that by resolved q's incident in pager at at
// (zero: now). That does not answer the question: it stays pending, and
// every copy and the audit trail say so. ENotFound, recording nothing, as
// PageAcknowledged.
func (r *Router) PageResolved(ctx context.Context, id, pager, by string, at time.Time) error {
	q, err := r.pageQuestion(ctx, id, pager)
	if err != nil || q.Status != domain.StatusPending {
		return err
	}
	r.audit(ctx, q, domain.AuditEntry{Type: "page.resolved", By: &domain.Person{Platform: "pager", ID: by, Name: by},
		Detail: "the incident was resolved by " + by + " in " + pager + "; that does not answer the question, which is still waiting"})
	at = r.pagerTime(at)
	return r.remark(ctx, q, domain.Remark{Kind: RemarkPageResolved, By: by, At: at,
		Text: "The page was resolved in " + pager + " by " + by + " at " + at.Format("15:04") + " UTC; the question is still open"})
}

// pagerTime is when a pager says something happened, in UTC; now when it
// did not say.
func (r *Router) pagerTime(at time.Time) time.Time {
	if at.IsZero() {
		at = r.clock.Now()
	}
	return at.UTC()
}

// remark adds rm to q's remarks and, when that changed the record,
// re-renders every copy. A question that ended meanwhile keeps its final
// copies.
func (r *Router) remark(ctx context.Context, q *domain.Question, rm domain.Remark) error {
	fresh, changed, err := r.store.Remark(ctx, q.ProjectID, q.ID, rm)
	switch {
	case err != nil && fresh != nil && fresh.Status.Final():
		return nil
	case err != nil:
		return err
	case changed:
		r.updateCopies(fresh)
	}
	return nil
}

// pageQuestion reads the question a pager's news is about: ENotFound when
// the bridge does not know it, or never paged it through pager — a
// correctly signed message about any other question changes nothing.
func (r *Router) pageQuestion(ctx context.Context, id, pager string) (*domain.Question, error) {
	project, err := r.store.Locate(ctx, id)
	if err != nil {
		return nil, err
	}
	q, err := r.store.Get(ctx, project, id)
	if err != nil {
		return nil, err
	}
	if !r.paged(q, pager) {
		return nil, domain.Errorf(domain.ENotFound, "question %s was never paged through %s", id, pager)
	}
	return q, nil
}

// paged reports whether the bridge paged q through pager (named in any
// case: "PagerDuty" is the pager "pagerduty"): when it was asked, on a
// route that pages, or at an escalation step it reached that pages.
func (r *Router) paged(q *domain.Question, pager string) bool {
	through := func(p *domain.Page) bool { return p != nil && strings.EqualFold(p.Pager, pager) }
	if rt, ok := r.routes[q.Route]; ok && through(rt.Page) {
		return true
	}
	for i := 0; i < q.EscalationLevel && i < len(q.Escalation); i++ {
		if through(q.Escalation[i].Page) {
			return true
		}
	}
	return false
}

// pageAcknowledged reports whether q's page was acknowledged.
func (r *Router) pageAcknowledged(ctx context.Context, q *domain.Question) bool {
	ok, err := r.store.Marked(ctx, ackKey(q.ProjectID, q.ID))
	return err == nil && ok
}

// PagePayload is the payload of a page's deliveries (Delivery.Payload):
// which of the pager's settings, for which step (0: the route's page when
// the question is asked, n: escalation step n).
type PagePayload struct {
	Profile string `json:"profile"`
	Step    int    `json:"step"`
}

// Kinds of page deliveries: Event is "<pager>.<kind>".
const (
	PageTrigger = "trigger"
	PageResolve = "resolve"
)

// resolveDelay holds a resolve back briefly, so a trigger already on its
// way to the pager when the question ended arrives before it.
const resolveDelay = 3 * time.Second

// pageDeliveryID is the delivery id of one page event of a question: the
// same on every replica and every re-ask, so the queue sends it once.
func pageDeliveryID(p *domain.Page, kind, id string, step int) string {
	return p.Pager + "." + kind + ":" + id + ":" + strconv.Itoa(step)
}

// enqueuePage queues one page event of q through the delivery queue,
// due at (zero: now); with onEnd, registers it to be queued when q ends
// (QueueOnEnd), due resolveDelay after that.
func (r *Router) enqueuePage(ctx context.Context, q *domain.Question, p *domain.Page, kind string, step int, at time.Time, onEnd bool) {
	payload, _ := json.Marshal(PagePayload{Profile: p.Profile, Step: step})
	d := Delivery{ID: pageDeliveryID(p, kind, q.ID, step), ProjectID: q.ProjectID, QuestionID: q.ID,
		Event: p.Pager + "." + kind, Payload: payload, CreatedAt: at}
	ctx, when := context.WithoutCancel(ctx), ""
	var queued bool
	var err error
	if onEnd {
		d.CreatedAt, when = r.clock.Now(), " when the question ends"
		queued, err = r.store.QueueOnEnd(ctx, d, resolveDelay)
	} else {
		queued, err = r.store.EnqueueDelivery(ctx, d)
	}
	switch {
	case err != nil:
		r.log.Error("queueing a page failed", "question", q.ID, "event", d.Event, "err", err)
		r.audit(ctx, q, domain.AuditEntry{Type: "page.failed", Detail: d.Event + ": could not be queued: " + err.Error()})
	case queued:
		r.audit(ctx, q, domain.AuditEntry{Type: "page.queued", Detail: d.Event + " (step " + strconv.Itoa(step) + ")" + when})
	}
}

// pageOnAsk pages for a question just asked on a route that pages.
func (r *Router) pageOnAsk(ctx context.Context, q *domain.Question, route *domain.Route) {
	if route == nil || route.Page == nil {
		return
	}
	r.trigger(ctx, q, route.Page, 0)
}

// pageOnStep pages for escalation step level+1 of q.
func (r *Router) pageOnStep(ctx context.Context, q *domain.Question, step domain.EscalationStep, level int) {
	if step.Page == nil {
		return
	}
	r.trigger(ctx, q, step.Page, level+1)
}

// trigger queues a page of q for step, after registering its resolve
// with the store (QueueOnEnd): the resolve is then queued in the very
// step that ends the question, whichever way and on whichever replica,
// so a replica dying just after a transition cannot leave the incident
// open. Registering first means a crash between the two leaves at worst
// a resolve of an incident never triggered, which the pager ignores.
func (r *Router) trigger(ctx context.Context, q *domain.Question, p *domain.Page, step int) {
	r.enqueuePage(ctx, q, p, PageResolve, step, time.Time{}, true)
	r.enqueuePage(ctx, q, p, PageTrigger, step, time.Time{}, false)
}

// resolvePages queues the resolve of every page that went out (or may
// have) for a question that has ended; a trigger still queued is dropped
// by its sender, which finds the question no longer pending. The store
// has queued these already, in the step that ended the question (see
// trigger), so this is a second attempt that queues nothing (each id is
// queued once); it still resolves the pages of a question paged by an
// earlier release, which registered no resolve.
func (r *Router) resolvePages(q *domain.Question) {
	var pages []*domain.Page
	var steps []int
	if rt, ok := r.routes[q.Route]; ok && rt.Page != nil {
		pages, steps = append(pages, rt.Page), append(steps, 0)
	}
	for i := 0; i < q.EscalationLevel && i < len(q.Escalation); i++ {
		if p := q.Escalation[i].Page; p != nil {
			pages, steps = append(pages, p), append(steps, i+1)
		}
	}
	if len(pages) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.bgCtx, 10*time.Second)
	defer cancel()
	at := r.clock.Now().Add(resolveDelay)
	for i, p := range pages {
		r.enqueuePage(ctx, q, p, PageResolve, steps[i], at, false)
	}
}
