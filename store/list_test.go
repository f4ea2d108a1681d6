package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListOfARareStatusStopsEarlyAndGoesOn: a page of a status that few
// records have reads a bounded part of the index, and its cursor goes on
// from there: the pages are short, and still reach every one.
func TestListOfARareStatusStopsEarlyAndGoesOn(t *testing.T) {
	s := open(t, storetest.Redis(t).URL)
	ctx := context.Background()
	var want []string
	qs := storetest.FillPending(t, s, "ops", 20)
	for _, k := range []int{0, 13, 19} {
		a := domain.Resolve([]domain.Item{{Question: "x"}}, [][]string{{"yes"}})
		_, err := s.Transition(ctx, "ops", qs[k].ID, lifecycle.Transition{To: domain.StatusAnswered, Answer: &a,
			By: &domain.Person{Platform: "api", ID: "a"}, At: time.Now().UTC()})
		require.NoError(t, err)
	}
	// FillPending creates all but the first concurrently: read the order back.
	page, err := s.ListPage(ctx, "ops", lifecycle.ListQuery{Limit: lifecycle.MaxListLimit})
	require.NoError(t, err)
	for _, q := range page.Questions {
		if q.Status == domain.StatusAnswered {
			want = append(want, q.ID)
		}
	}
	defer store.SetScanBudget(4)()
	var got []string
	cursor, pages := "", 0
	for {
		p, err := s.ListPage(ctx, "ops", lifecycle.ListQuery{Status: domain.StatusAnswered, Cursor: cursor, Limit: 2})
		require.NoError(t, err)
		for _, q := range p.Questions {
			got = append(got, q.ID)
		}
		pages++
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	assert.Equal(t, want, got)
	assert.GreaterOrEqual(t, pages, 5, fmt.Sprintf("20 entries read 4 at a time: %d pages", pages))
}

// TestConformanceOfTheLongListPaths runs the conformance suite with the
// paths a long list takes forced on small ones: the pending questions read
// along the creation index, and a page's reading cut after 3 entries.
func TestConformanceOfTheLongListPaths(t *testing.T) {
	defer store.SetFewPending(0)()
	defer store.SetScanBudget(3)()
	storetest.Run(t, func(t *testing.T) func() lifecycle.Store {
		srv := storetest.Redis(t)
		return func() lifecycle.Store { return open(t, srv.URL) }
	})
}
