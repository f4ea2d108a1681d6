package native

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/internal/fairclaim"
)

// The delivery queue: per project the deliveries by id and the outbox
// index (due ms -> id). A claim moves a delivery's due time to the end of
// its lease and stamps it with a lease token; the holder renews the lease
// while it sends; another claim takes it over only once the lease ran out.

// enqueue queues d due at at, with the question as it is now (r, nil for
// none): the record may go with retention before it is delivered.
func (c *core) enqueue(w *batch, p *proj, d lifecycle.Delivery, r *qrec, at time.Time) {
	rec := &dlvrec{Question: d.QuestionID, Event: d.Event, Created: at.UnixNano(), Due: ms(at), Payload: d.Payload,
		TTL: wallMS() + c.opts.DeliveryKeep.Milliseconds()}
	if r != nil {
		m := r.m
		if m.Extra != nil { // a copy without the deliveries to queue
			x := *m.Extra
			x.End = nil
			m.Extra = &x
		}
		rec.Meta, rec.Doc = &m, c.doc(p.name, d.QuestionID, r)
	}
	c.dropDelivery(w, p, d.ID, false)
	p.dlv[d.ID] = rec
	p.outbox.ReplaceOrInsert(item{rec.Due, d.ID})
	w.putJSON(bDlv, key(p.name, d.ID), rec)
}

// dropDelivery removes a delivery from memory and, when disk is set, from
// the database.
func (c *core) dropDelivery(w *batch, p *proj, id string, disk bool) {
	old := p.dlv[id]
	if old == nil {
		return
	}
	p.outbox.Delete(item{old.Due, id})
	delete(p.dlv, id)
	if disk {
		w.del(bDlv, key(p.name, id))
	}
}

func (c *core) saveDelivery(w *batch, p *proj, id string, rec *dlvrec, due int64) {
	p.outbox.Delete(item{rec.Due, id})
	rec.Due = due
	p.outbox.ReplaceOrInsert(item{rec.Due, id})
	w.putJSON(bDlv, key(p.name, id), rec)
}

// allLanes, as the only lane a claim is given, takes from every lane.
const allLanes = "*"

// ClaimDeliveries implements lifecycle.DeliveryQueue: every lane's due
// deliveries, the earliest due first. Projects are read in turn, each
// call starting one further, and each gets an equal share of max first,
// so a project with a long queue cannot starve the others.
func (c *core) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, maxN int) ([]lifecycle.Delivery, error) {
	return c.claim(ctx, now, lease, map[string]int{allLanes: maxN})
}

// ClaimLanes leases up to want[lane] due deliveries of each lane named:
// lifecycle.SenderWebhook for the resume webhooks, a sender's name for the
// pages or mails it sends (lifecycle.DeliverySender of their event), ""
// for those of every sender's lane not named (a sender this replica
// lacks; never the resume webhooks'). A
// lane's deliveries are taken in due order, passing over those of other
// lanes, so a long queue of mails never stands before a resume webhook.
// Projects are read in turn, as by ClaimDeliveries.
func (c *core) ClaimLanes(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error) {
	lanes := maps.Clone(want)
	delete(lanes, allLanes)
	return c.claim(ctx, now, lease, lanes)
}

func (c *core) claim(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error) {
	projects, _ := c.Projects(ctx)
	if len(projects) == 0 {
		return nil, nil
	}
	n := c.claims.Add(1)
	token := c.leaseID + "." + strconv.FormatUint(n, 36)
	start := int(n % uint64(len(projects)))
	return fairclaim.Claim(projects, start, want, func(p string, asked map[string]int) ([]lifecycle.Delivery, map[string]int, error) {
		return c.claimIn(p, now, lease, asked, token)
	})
}

// laneOf is the lane of a delivery of event, as a claim names it: "" for
// a sender's lane the claim does not name.
func laneOf(want map[string]int, event string) string {
	if _, all := want[allLanes]; all {
		return allLanes
	}
	l := lifecycle.DeliverySender(event)
	if _, named := want[l]; !named && l != lifecycle.SenderWebhook {
		return ""
	}
	return l
}

func (c *core) claimIn(project string, now time.Time, lease time.Duration, want map[string]int, token string) ([]lifecycle.Delivery, map[string]int, error) {
	type claimed struct {
		d    lifecycle.Delivery
		meta *qmeta
		doc  string
	}
	var got []claimed
	counts := map[string]int{}
	// A write, not a note: what it claims (a resume after an answer, a
	// page) goes out only once the change that queued it is committed.
	err := c.write(func(w *batch) error {
		p := c.projects[project]
		if p == nil {
			return nil
		}
		left := maps.Clone(want)
		open := len(left)
		var due []item
		upTo(p.outbox, ms(now), func(it item) bool {
			l := allLanes
			if rec := p.dlv[it.id]; rec != nil {
				l = laneOf(want, rec.Event)
			} else if _, all := want[allLanes]; !all {
				l = lifecycle.SenderWebhook
			}
			if left[l] <= 0 {
				return true // another lane's, or this lane has enough
			}
			due = append(due, it)
			counts[l]++
			if left[l]--; left[l] == 0 {
				open--
			}
			return open > 0
		})
		wall := wallMS()
		for _, it := range due {
			id := it.id
			rec := p.dlv[id]
			if rec == nil || rec.TTL <= wall {
				p.outbox.Delete(it)
				c.dropDelivery(w, p, id, true)
				got = append(got, claimed{d: lifecycle.Delivery{ID: id, ProjectID: project, Expired: true}})
				continue
			}
			rec.Attempts++
			rec.Lease = token
			c.saveDelivery(w, p, id, rec, ms(now)+lease.Milliseconds())
			got = append(got, claimed{d: lifecycle.Delivery{ID: id, ProjectID: project, QuestionID: rec.Question, Event: rec.Event,
				Attempts: rec.Attempts, CreatedAt: time.Unix(0, rec.Created).UTC(), Lease: token, Payload: rec.Payload}, meta: rec.Meta, doc: rec.Doc})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	out := make([]lifecycle.Delivery, 0, len(got))
	for _, g := range got {
		if g.meta != nil && g.doc != "" {
			if q, err := store.DecodeRecord(project, g.d.QuestionID, g.meta.fields(), g.doc); err == nil {
				g.d.Question = q
			}
		}
		out = append(out, g.d)
	}
	return out, counts, nil
}

// RenewDeliveries implements lifecycle.DeliveryQueue.
func (c *core) RenewDeliveries(_ context.Context, ds []lifecycle.Delivery, until time.Time) ([]string, error) {
	var lost []string
	err := c.note(func(w *batch) error {
		for _, d := range ds {
			var rec *dlvrec
			if p := c.projects[d.ProjectID]; p != nil {
				rec = p.dlv[d.ID]
				if rec != nil && rec.Lease == d.Lease {
					c.saveDelivery(w, p, d.ID, rec, ms(until))
					continue
				}
			}
			lost = append(lost, d.ID)
		}
		return nil
	})
	return lost, err
}

// FinishDelivery implements lifecycle.DeliveryQueue.
func (c *core) FinishDelivery(_ context.Context, d lifecycle.Delivery) error {
	return c.note(func(w *batch) error {
		if p := c.projects[d.ProjectID]; p != nil {
			c.dropDelivery(w, p, d.ID, true)
		}
		return nil
	})
}

// RetryDelivery implements lifecycle.DeliveryQueue.
func (c *core) RetryDelivery(_ context.Context, d lifecycle.Delivery, at time.Time) error {
	return c.note(func(w *batch) error {
		p := c.projects[d.ProjectID]
		if p == nil {
			return nil
		}
		rec := p.dlv[d.ID]
		if rec == nil || (d.Lease != "" && rec.Lease != d.Lease) {
			return nil
		}
		rec.Attempts, rec.Lease = d.Attempts, ""
		c.saveDelivery(w, p, d.ID, rec, ms(at))
		return nil
	})
}

// EnqueueDelivery implements lifecycle.DeliveryQueue: a sender's delivery
// (a page, a mail), queued once per id: a marker kept as long as an
// undelivered delivery is (Options.DeliveryKeep) remembers the id after
// it was sent.
func (c *core) EnqueueDelivery(_ context.Context, d lifecycle.Delivery) (bool, error) {
	if d.ID == "" || d.ProjectID == "" || d.QuestionID == "" || d.Event == "" {
		return false, errors.New("store: a delivery needs an id, a project, a question and an event")
	}
	at := d.CreatedAt
	if at.IsZero() {
		at = time.Now()
	}
	queued := false
	err := c.write(func(w *batch) error {
		wall := wallMS()
		p := c.proj(d.ProjectID)
		_, r := c.live(d.ProjectID, d.QuestionID, wall)
		queued = c.enqueueOnce(w, p, d, r, at, wall)
		return nil
	})
	return queued && err == nil, err
}
