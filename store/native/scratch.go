package native

import (
	"context"
	"encoding/json"
	"time"

	"github.com/askbridge/askbridge/store"
)

// PutDraft implements lifecycle.Scratch. A question's drafts go with the
// question when it becomes final; ttl bounds them in any case.
func (c *core) PutDraft(_ context.Context, project, id, person string, draft map[string][]string, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = c.opts.Retention
	}
	b := string(store.Marshal(draft))
	return c.note(func(w *batch) error {
		p := c.proj(project)
		wall := wallMS()
		d := p.drafts[id]
		if d == nil || d.TTL <= wall {
			c.dropDrafts(w, p, id)
			d = &draftrec{M: map[string]string{}}
		}
		p.draftTTL.Delete(item{d.TTL, id})
		d.M[person], d.TTL = b, wall+ttl.Milliseconds()
		p.drafts[id] = d
		p.draftTTL.ReplaceOrInsert(item{d.TTL, id})
		w.putJSON(bDraft, key(project, id), d)
		return nil
	})
}

func (c *core) dropDrafts(w *batch, p *proj, id string) {
	if d := p.drafts[id]; d != nil {
		p.draftTTL.Delete(item{d.TTL, id})
		delete(p.drafts, id)
		w.del(bDraft, key(p.name, id))
	}
}

// GetDraft implements lifecycle.Scratch.
func (c *core) GetDraft(ctx context.Context, project, id, person string) (map[string][]string, error) {
	out := map[string][]string{}
	var b string
	err := c.view(ctx, func() uint64 {
		b = ""
		p := c.projects[project]
		if p != nil {
			if d := p.drafts[id]; d != nil && d.TTL > wallMS() {
				b = d.M[person]
			}
		}
		return p.version()
	})
	if err != nil {
		return nil, err
	}
	if b != "" {
		_ = json.Unmarshal([]byte(b), &out)
	}
	return out, nil
}

// Once implements lifecycle.Scratch.
func (c *core) Once(_ context.Context, k string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		ttl = c.opts.Retention
	}
	first := false
	err := c.note(func(w *batch) error {
		first = c.mark(w, k, wallMS(), ttl)
		return nil
	})
	return first && err == nil, err
}

// mark marks k for ttl unless it is marked; it reports whether it did.
func (c *core) mark(w *batch, k string, wall int64, ttl time.Duration) bool {
	if until, ok := c.once[k]; ok && until > wall {
		return false
	} else if ok {
		c.onceTTL.Delete(item{until, k})
	}
	until := wall + ttl.Milliseconds()
	c.once[k] = until
	c.onceTTL.ReplaceOrInsert(item{until, k})
	w.put(bOnce, []byte(k), onceValue(until))
	return true
}

// Marked implements lifecycle.Scratch.
func (c *core) Marked(ctx context.Context, k string) (bool, error) {
	marked := false
	err := c.view(ctx, func() uint64 {
		until, ok := c.once[k]
		marked = ok && until > wallMS()
		return c.onceVer
	})
	return marked && err == nil, err
}
