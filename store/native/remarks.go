package native

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
)

// Remark implements lifecycle.Questions (package store's remarkScript):
// the remarks line of the record's doc, which both stores decode alike
// (store.WithRemark), changes under the lock while the question is
// pending.
func (c *core) Remark(ctx context.Context, project, id string, rm domain.Remark) (*domain.Question, bool, error) {
	var f refusal
	var changed bool
	var snap snapshot
	err := c.write(func(w *batch) error {
		p, r := c.live(project, id, wallMS())
		switch {
		case r == nil:
			f.code = "notfound"
			return nil
		case r.m.Status != string(domain.StatusPending):
			f.code = "final"
			return nil
		}
		doc, _, _, ok := store.WithRemark(c.doc(p.name, id, r), rm)
		if ok {
			r.doc, changed = doc, true
			r.m.Updated = time.Now().UTC().UnixNano()
			w.putQ(p.name, id, r)
			c.wake(w, p.name, id)
		}
		snap = snapshot{id, r.m.fields(), c.doc(p.name, id, r)}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if f.code != "" {
		q, err := c.refused(ctx, project, id, f)
		return q, false, err
	}
	q, err := store.DecodeRecord(project, id, snap.fields, snap.doc)
	return q, changed, err
}
