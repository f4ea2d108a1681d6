package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageAll reads every page of a list with pages of limit and returns the
// ids in the order listed and how many pages it took.
func pageAll(t testing.TB, s lifecycle.Store, p string, status domain.Status, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	cursor, pages := "", 0
	for {
		page, err := s.ListPage(ctx, p, lifecycle.ListQuery{Status: status, Cursor: cursor, Limit: limit})
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Questions), limit)
		pages++
		for _, q := range page.Questions {
			if status != "" {
				require.Equal(t, status, q.Status)
			}
			ids = append(ids, q.ID)
		}
		if cursor = page.Next; cursor == "" {
			return ids, pages
		}
		require.Less(t, pages, 100000, "the pages never end")
	}
}

// testListPages: pages of every status list each question once, oldest
// first, and the last page says so (no next cursor).
func testListPages(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	var all, pending, answered []string
	for i := range 23 {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		create(t, s, q)
		all = append(all, q.ID)
		if i%3 == 1 {
			_, err := s.Transition(ctx, p, q.ID, answer("a"))
			require.NoError(t, err)
			answered = append(answered, q.ID)
		} else {
			pending = append(pending, q.ID)
		}
	}
	for _, tc := range []struct {
		status domain.Status
		want   []string
	}{{"", all}, {domain.StatusPending, pending}, {domain.StatusAnswered, answered}, {domain.StatusExpired, nil}} {
		got, pages := pageAll(t, s, p, tc.status, 5)
		assert.Equal(t, tc.want, got, "status %q: every question once, oldest first", tc.status)
		assert.GreaterOrEqual(t, pages, max(1, (len(tc.want)+4)/5), "status %q: pages of at most 5", tc.status)
	}
	one, err := s.ListPage(ctx, p, lifecycle.ListQuery{Status: domain.StatusPending})
	require.NoError(t, err)
	assert.Len(t, one.Questions, len(pending), "the default page holds them all")
	assert.Empty(t, one.Next)
	empty, err := s.ListPage(ctx, project(), lifecycle.ListQuery{})
	require.NoError(t, err)
	assert.NotNil(t, empty.Questions)
	assert.Empty(t, empty.Questions)
	assert.Empty(t, empty.Next)
}

// testListCursorStable: questions that end between pages, and new ones,
// never make a page skip or repeat a question still pending: the cursor is
// a place in the creation order, not an offset.
func testListCursorStable(t *testing.T, open func() lifecycle.Store) {
	s, other := open(), open()
	p := project()
	var ids []string
	for i := range 12 {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		create(t, s, q)
		ids = append(ids, q.ID)
	}
	// Read pages until at least 5 were shown (a page may be short).
	var shown []string
	cursor := ""
	for len(shown) < 5 {
		page, err := s.ListPage(ctx, p, lifecycle.ListQuery{Status: domain.StatusPending, Cursor: cursor, Limit: 5})
		require.NoError(t, err)
		for _, q := range page.Questions {
			shown = append(shown, q.ID)
		}
		cursor = page.Next
		require.NotEmpty(t, cursor)
	}
	k := len(shown)
	require.Equal(t, ids[:k], shown)
	require.Less(t, k, 10)
	// Between pages: one shown and one not yet shown end, one is asked.
	_, err := s.Transition(ctx, p, ids[1], answer("a"))
	require.NoError(t, err)
	_, err = s.Transition(ctx, p, ids[k+1], lifecycle.Transition{To: domain.StatusCancelled, CancelReason: domain.CancelUser, At: time.Now().UTC()})
	require.NoError(t, err)
	late := newQ(p, "run-late")
	create(t, s, late)
	var rest []string
	for cursor != "" {
		page, err := other.ListPage(ctx, p, lifecycle.ListQuery{Status: domain.StatusPending, Cursor: cursor, Limit: 5})
		require.NoError(t, err, "a cursor is good on every replica")
		for _, q := range page.Questions {
			rest = append(rest, q.ID)
		}
		cursor = page.Next
	}
	want := append(append([]string{ids[k]}, ids[k+2:]...), late.ID)
	assert.Equal(t, want, rest, "the rest of the pending questions, each once, the new one last")

	first, err := s.ListPage(ctx, p, lifecycle.ListQuery{Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, first.Next)
	_, err = s.ListPage(ctx, p, lifecycle.ListQuery{Cursor: "not-a-cursor"})
	assert.Equal(t, domain.EInvalid, domain.ErrorCode(err))
	var de *domain.Error
	require.ErrorAs(t, err, &de)
	require.Len(t, de.Details, 1)
	assert.Equal(t, "cursor", de.Details[0].Field)
	_, err = s.ListPage(ctx, p, lifecycle.ListQuery{Cursor: first.Next + "A"})
	assert.Equal(t, domain.EInvalid, domain.ErrorCode(err), "a changed cursor is refused")
}

// testDeadlines: the pending questions nearest deadline first, whatever
// the order they were asked in, and how many are pending.
func testDeadlines(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	var ids []string
	for i := range 5 {
		q := newQ(p, fmt.Sprintf("run-%d", i))
		q.ExpiresAt = q.CreatedAt.Add(time.Duration(10-i) * time.Minute)
		create(t, s, q)
		ids = append(ids, q.ID)
	}
	_, err := s.Transition(ctx, p, ids[4], answer("a"))
	require.NoError(t, err)
	ds, n, err := s.Deadlines(ctx, p, 2)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "pending in all")
	require.Len(t, ds, 2)
	assert.Equal(t, []string{ids[3], ids[2]}, []string{ds[0].ID, ds[1].ID}, "nearest deadline first")
	q, err := s.Get(ctx, p, ids[3])
	require.NoError(t, err)
	assert.Equal(t, q.ExpiresAt.UnixMilli(), ds[0].At.UnixMilli())
	ds, n, err = s.Deadlines(ctx, project(), 10)
	require.NoError(t, err)
	assert.Empty(t, ds)
	assert.Zero(t, n)
}

// Backlog is the conformance test of a large backlog, for the stores
// that fill 10,000 questions in a few seconds (the others run the same
// paging at a smaller scale in Run): every pending question is reached by
// paging, the oldest first; Deadlines counts them all and starts at the
// nearest deadline.
func Backlog(t *testing.T, s lifecycle.Store) {
	if testing.Short() {
		t.Skip("fills 10,000 questions")
	}
	p := project()
	qs := FillPending(t, s, p, 10000)
	start := time.Now()
	ids, pages := pageAll(t, s, p, domain.StatusPending, lifecycle.MaxListLimit)
	t.Logf("10,000 pending: %d pages of %d in %v", pages, lifecycle.MaxListLimit, time.Since(start).Round(time.Millisecond))
	require.Len(t, ids, len(qs))
	assert.Equal(t, qs[0].ID, ids[0], "the oldest first")
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	assert.Len(t, seen, len(qs), "each once")
	all, _ := pageAll(t, s, p, "", lifecycle.MaxListLimit)
	assert.Len(t, all, len(qs), "the list of every status too")
	ds, n, err := s.Deadlines(ctx, p, 3)
	require.NoError(t, err)
	assert.Equal(t, len(qs), n)
	require.Len(t, ds, 3)
	assert.Equal(t, []string{qs[0].ID, qs[1].ID, qs[2].ID}, []string{ds[0].ID, ds[1].ID, ds[2].ID})
}
