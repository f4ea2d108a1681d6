package native

import (
	"context"
	"time"
)

// trimLimit bounds what one Trim drops per index and project: a sweep
// stays short however much has piled up, and the next one goes on.
const trimLimit = 2000

// Trim implements lifecycle.Retention: in every project, final records
// whose retention has passed at now, records, runs, idempotency keys and
// drafts whose lifetime ended, events older
// than Retention and audit entries older than AuditRetention; and Once
// keys (and the markers of queued deliveries) whose time is up. It returns the number of records dropped.
func (c *core) Trim(_ context.Context, now time.Time) (int, error) {
	total := 0
	err := c.note(func(w *batch) error {
		wall := wallMS()
		for _, p := range c.projects {
			var ids []string
			collect := func(t *tree, until int64) []string {
				ids = ids[:0]
				upTo(t, until, func(it item) bool {
					ids = append(ids, it.id)
					return len(ids) < trimLimit
				})
				return ids
			}
			for _, id := range collect(p.exp, ms(now)) {
				c.dropQuestion(w, p, id)
				total++
			}
			for _, id := range collect(p.ttl, wall) {
				c.dropQuestion(w, p, id)
				total++
			}
			for _, id := range collect(p.runTTL, wall) {
				if r := c.holdRun(p, id); r != nil {
					c.dropRun(w, p, r)
				}
			}
			for _, name := range collect(p.idemTTL, wall) {
				if r := p.idem[name]; r != nil {
					p.idemTTL.Delete(item{r.TTL, name})
					delete(p.idem, name)
					w.del(bIdem, key(p.name, name))
				}
			}
			for _, id := range collect(p.draftTTL, wall) {
				c.dropDrafts(w, p, id)
			}
			// An unsent delivery that outlived its keep stays queued, so
			// its claim reports it (Delivery.Expired).
			c.trimEvents(w, p, ms(now.Add(-c.opts.Retention)))
			c.trimAudit(w, p, ms(now.Add(-c.opts.AuditRetention)))
			if len(p.qs) == 0 {
				p.seq = 0
			}
		}
		var keys []string
		upTo(c.onceTTL, wall, func(it item) bool {
			keys = append(keys, it.id)
			return len(keys) < trimLimit
		})
		for _, k := range keys {
			c.onceTTL.Delete(item{c.once[k], k})
			delete(c.once, k)
			w.del(bOnce, []byte(k))
		}
		return nil
	})
	return total, err
}

// dropQuestion removes a record, its index entries and drafts.
func (c *core) dropQuestion(w *batch, p *proj, id string) {
	r := p.qs[id]
	if r == nil {
		return
	}
	c.unindex(p, id, r)
	delete(p.qs, id)
	c.dropDrafts(w, p, id)
	if run := c.holdRun(p, r.m.Run); run != nil {
		for i, q := range run.Qs {
			if q == id {
				run.Qs = append(run.Qs[:i:i], run.Qs[i+1:]...)
				c.saveRun(w, p, run, run.TTL)
				break
			}
		}
	}
	w.del(bQ, key(p.name, id))
}
