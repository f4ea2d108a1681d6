package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
)

// Batches of approvals (domain/batch.go) on the web: the batch page shows
// every call of a batch, each a card with its exact action and its own
// Allow / Deny, under one Allow all / Deny all; the inbox and a call's
// question page carry the same strip above the batch's calls.

// batchHead is the Allow all / Deny all strip of a batch.
type batchHead struct {
	ID      string
	Project string
	Agent   string
	Total   int      // calls in the batch (on this page, in the inbox)
	Pending []string // the pending calls it decides: the ones shown
	Return  string   // where the form returns: inbox, question or batch
	Back    string   // the question page to return to (return=question)
	CSRF    string
}

// batchView is the batch page.
type batchView struct {
	Head  *batchHead
	Batch *domain.Batch
	Cards []*cardView
	// Outcome lists the calls a decision left pending, and why.
	Outcome *batchOutcome
}

// batchOutcome is what the last Allow all / Deny all did, when it did not
// decide every call shown.
type batchOutcome struct {
	Summary string
	Refused []string // "“Allow Bash: rm -rf /srv?” is still waiting: …"
}

// groupBatches orders a deadline-sorted list so that the pending calls of
// one batch follow each other, at the place of the batch's first call.
func groupBatches(qs []*domain.Question) []*domain.Question {
	n := map[string]int{}
	for _, q := range qs {
		if q.BatchID != "" {
			n[q.BatchID]++
		}
	}
	out := make([]*domain.Question, 0, len(qs))
	placed := map[string]bool{}
	for _, q := range qs {
		if q.BatchID == "" || n[q.BatchID] < 2 {
			out = append(out, q)
			continue
		}
		if placed[q.BatchID] {
			continue
		}
		placed[q.BatchID] = true
		for _, m := range qs {
			if m.BatchID == q.BatchID {
				out = append(out, m)
			}
		}
	}
	return out
}

// batchHeads gives the first card of each run of two or more pending calls
// of one batch the batch's strip, deciding the calls shown.
func batchHeads(cards []*cardView, v *viewer) {
	for n := 0; n < len(cards); {
		b := cards[n].Q.BatchID
		end := n + 1
		for end < len(cards) && b != "" && cards[end].Q.BatchID == b {
			end++
		}
		if end-n >= 2 {
			h := &batchHead{ID: b, Project: cards[n].Q.ProjectID, Agent: cards[n].Agent, Total: end - n, Return: "inbox", CSRF: v.CSRF}
			for _, c := range cards[n:end] {
				h.Pending = append(h.Pending, c.Q.ID)
				c.InBatch = true
			}
			cards[n].BatchHead = h
		}
		n = end
	}
}

// questionBatch gives a pending call's question page the strip of its
// batch, when the batch has other calls.
func (i *Inbox) questionBatch(ctx context.Context, c *cardView, v *viewer) {
	q := c.Q
	if q.BatchID == "" || q.Status != domain.StatusPending {
		return
	}
	b, err := i.router.Batch(ctx, q.ProjectID, q.BatchID)
	if err != nil || len(b.Questions) < 2 {
		return
	}
	h := &batchHead{ID: b.ID, Project: b.ProjectID, Agent: c.Agent, Total: len(b.Questions), Return: "question", Back: q.ID, CSRF: v.CSRF}
	for _, x := range b.Questions {
		if x.Status == domain.StatusPending {
			h.Pending = append(h.Pending, x.ID)
		}
	}
	c.BatchHead = h
}

// locateBatch finds a batch the viewer may see; nil, nil when there is
// none (or it is in a project the viewer may not see).
func (i *Inbox) locateBatch(ctx context.Context, v *viewer, id string) (*domain.Batch, error) {
	project, err := i.router.Locate(ctx, id)
	if domain.ErrorCode(err) == domain.ENotFound || (err == nil && !v.may(project)) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := i.router.Batch(ctx, project, id)
	if domain.ErrorCode(err) == domain.ENotFound {
		return nil, nil
	}
	return b, err
}

func (i *Inbox) batchView(b *domain.Batch, v *viewer) *batchView {
	bv := &batchView{Batch: b}
	for _, q := range b.Questions {
		c := i.card(q, nil, v, "batch")
		c.InBatch = true
		bv.Cards = append(bv.Cards, c)
	}
	h := &batchHead{ID: b.ID, Project: b.ProjectID, Total: len(b.Questions), Return: "batch", CSRF: v.CSRF}
	if len(bv.Cards) > 0 {
		h.Agent = bv.Cards[0].Agent
	}
	for _, q := range b.Questions {
		if q.Status == domain.StatusPending {
			h.Pending = append(h.Pending, q.ID)
		}
	}
	bv.Head = h
	return bv
}

func (i *Inbox) handleBatch(rq *request) error {
	ctx := rq.r.Context()
	b, err := i.locateBatch(ctx, rq.viewer, rq.r.PathValue("id"))
	if err != nil {
		return err
	}
	if b == nil {
		if rq.r.URL.Query().Get("fragment") != "" {
			http.Error(rq.w, "not found", http.StatusNotFound)
			return nil
		}
		i.notFound(rq, "Batch")
		return nil
	}
	bv := i.batchView(b, rq.viewer)
	if rq.r.URL.Query().Get("fragment") == "head" {
		// Live updates put the strip above the batch's calls in the inbox.
		bv.Head.Return = "inbox"
		i.renderHead(rq.w, rq.r, bv.Head)
		return nil
	}
	d := pageData{Title: batchTitle(b), Viewer: rq.viewer, CSRF: rq.viewer.CSRF, Batch: bv}
	if id := rq.r.URL.Query().Get("done"); id == "b:"+b.ID && i.takeFlash(rq, id) {
		d.Flash = batchSummary(b)
	} else {
		d.Flash = i.flash(ctx, rq)
	}
	i.render(rq.w, rq.r, "batch", d)
	return nil
}

func batchTitle(b *domain.Batch) string {
	if b.Pending > 0 {
		return fmt.Sprintf("%d tool calls to approve", len(b.Questions))
	}
	return fmt.Sprintf("%d tool calls, decided", len(b.Questions))
}

// batchSummary says where a batch stands: "3 calls: 2 allowed, 1 denied;
// none waiting".
func batchSummary(b *domain.Batch) string {
	allowed, denied, other := 0, 0, 0
	for _, q := range b.Questions {
		switch {
		case q.Status == domain.StatusPending:
		case q.Decision != nil && q.Decision.Behavior == domain.BehaviorAllow:
			allowed++
		case q.Decision != nil:
			denied++
		default:
			other++
		}
	}
	var parts []string
	if allowed > 0 {
		parts = append(parts, strconv.Itoa(allowed)+" allowed")
	}
	if denied > 0 {
		parts = append(parts, strconv.Itoa(denied)+" denied")
	}
	if other > 0 {
		parts = append(parts, strconv.Itoa(other)+" ended otherwise")
	}
	waiting := "none waiting"
	if b.Pending > 0 {
		waiting = strconv.Itoa(b.Pending) + " still waiting"
	}
	return fmt.Sprintf("This batch of %d calls: %s; %s.", len(b.Questions), strings.Join(parts, ", "), waiting)
}

// handleBatchDecide is Allow all / Deny all: every call the form listed
// (the pending calls the person saw) that is still pending is decided.
func (i *Inbox) handleBatchDecide(rq *request) error {
	ctx := rq.r.Context()
	b, err := i.locateBatch(ctx, rq.viewer, rq.r.PathValue("id"))
	if err != nil {
		return err
	}
	if b == nil {
		i.notFound(rq, "Batch")
		return nil
	}
	form := rq.r.PostForm
	req := domain.BatchRespondRequest{Decision: form.Get("decision"), Questions: form["q"]}
	if reason := strings.TrimSpace(form.Get("reason")); reason != "" && req.Decision == domain.DecideDeny {
		req.Reason = &reason
	}
	if len(req.Questions) == 0 {
		req.Questions = []string{""} // a form that lists no call decides none
	}
	out, err := i.router.DecideBatch(ctx, b.ProjectID, b.ID, req, rq.viewer.Person(), true)
	back := "/batches/" + url.PathEscape(b.ID)
	switch form.Get("return") {
	case "inbox":
		back = "/"
	case "question":
		if qid := form.Get("back"); qid != "" {
			back = "/questions/" + url.PathEscape(qid)
		}
	}
	if err == nil && len(out.Refused) == 0 {
		for _, id := range append(out.Decided, out.Voted...) {
			if _, err := i.router.MarkRead(ctx, b.ProjectID, id); err != nil {
				i.log.Warn("marking notification read failed", "question", id, "err", err)
			}
		}
		if back == "/batches/"+url.PathEscape(b.ID) {
			i.setFlash(rq.w, rq.r, "b:"+b.ID)
			http.Redirect(rq.w, rq.r, back+"?done="+url.QueryEscape("b:"+b.ID), http.StatusSeeOther)
			return nil
		}
		http.Redirect(rq.w, rq.r, back, http.StatusSeeOther)
		return nil
	}
	code := domain.ErrorCode(err)
	if err != nil && (code == domain.EInternal || code == domain.EUnavailable) {
		return err
	}
	// Some calls (or all) were left pending: the batch page says which and
	// why, without a redirect that would lose it.
	if out.Batch != nil {
		b = out.Batch
	}
	bv := i.batchView(b, rq.viewer)
	status := http.StatusOK
	if err != nil {
		status = httperr.Status(code)
		bv.Outcome = &batchOutcome{Summary: words.Refusal(err, b.Questions[0], rq.viewer.Person()).Text}
		if code == domain.ENotAllowed || code == domain.EInvalid {
			bv.Outcome.Summary = "Nothing was decided: " + refusalText(err)
		}
	} else {
		bv.Outcome = &batchOutcome{Summary: fmt.Sprintf("%s %d of the calls.", decidedVerb(req), len(out.Decided)+len(out.Voted))}
	}
	for _, r := range out.Refused {
		what := r.ID
		for _, q := range b.Questions {
			if q.ID == r.ID && len(q.Questions) > 0 {
				what = "“" + q.Questions[0].Question + "”"
			}
		}
		bv.Outcome.Refused = append(bv.Outcome.Refused, what+" is still waiting: "+r.Message)
	}
	i.renderStatus(rq.w, rq.r, status, "batch", pageData{Title: batchTitle(b), Viewer: rq.viewer, CSRF: rq.viewer.CSRF, Batch: bv})
	return nil
}

func decidedVerb(req domain.BatchRespondRequest) string {
	if req.Decision == domain.DecideDeny {
		return "Denied"
	}
	return "Allowed"
}

// refusalText is an error's message with its details, for the page.
func refusalText(err error) string {
	var de *domain.Error
	if !errors.As(err, &de) {
		return err.Error()
	}
	msg := de.Message
	for _, d := range de.Details {
		msg += " (" + d.Field + ": " + d.Problem + ")"
	}
	return msg
}

func (i *Inbox) renderHead(w http.ResponseWriter, r *http.Request, h *batchHead) {
	var buf bytes.Buffer
	if err := i.tmpl["card"].ExecuteTemplate(&buf, "batch-head", h); err != nil {
		i.log.Error("rendering batch strip failed", "err", err)
		http.Error(w, "The batch could not be rendered.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	writeBody(w, r, http.StatusOK, buf.Bytes())
}
