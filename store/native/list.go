package native

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// ListPage implements lifecycle.QuestionReader: the creation-order index
// (of the status, when given) from the cursor's sequence number on.
func (c *core) ListPage(ctx context.Context, project string, lq lifecycle.ListQuery) (lifecycle.ListPage, error) {
	after, err := lifecycle.ParseCursor(lq.Cursor)
	if err != nil {
		return lifecycle.ListPage{}, err
	}
	limit := lifecycle.PageLimit(lq.Limit)
	page := lifecycle.ListPage{Questions: []*domain.Question{}}
	var ss []snapshot
	err = c.view(ctx, func() uint64 {
		ss, page.Next = nil, ""
		p := c.projects[project]
		if p == nil {
			return 0
		}
		idx := p.all
		if lq.Status != "" {
			idx = p.byStatus[string(lq.Status)]
		}
		if idx != nil {
			wall := wallMS()
			var last int64
			idx.AscendGreaterOrEqual(item{k: after + 1}, func(it item) bool {
				r := p.qs[it.id]
				if r == nil || !r.live(wall) {
					return true
				}
				if len(ss) == limit {
					page.Next = lifecycle.CursorAfter(last)
					return false
				}
				ss = append(ss, snapshot{it.id, r.m.fields(), c.doc(p.name, it.id, r)})
				last = it.k
				return true
			})
		}
		return p.ver
	})
	if err != nil {
		return lifecycle.ListPage{}, err
	}
	page.Questions = append(page.Questions, c.decode(project, ss)...)
	return page, nil
}

// Deadlines implements lifecycle.QuestionReader.
func (c *core) Deadlines(ctx context.Context, project string, limit int) ([]lifecycle.Deadline, int, error) {
	var out []lifecycle.Deadline
	n := 0
	err := c.view(ctx, func() uint64 {
		out, n = []lifecycle.Deadline{}, 0
		p := c.projects[project]
		if p == nil {
			return 0
		}
		wall := wallMS()
		p.deadlines.Ascend(func(it item) bool {
			if r := p.qs[it.id]; r != nil && r.live(wall) {
				if len(out) < limit {
					out = append(out, lifecycle.Deadline{ID: it.id, At: time.UnixMilli(it.k).UTC()})
				}
				n++
			}
			return true
		})
		return p.ver
	})
	if err != nil {
		return nil, 0, err
	}
	return out, n, nil
}
