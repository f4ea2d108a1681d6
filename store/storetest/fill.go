package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// FillPending creates n pending questions in project straight through the
// store (no chat posts, no events to wait for), fast enough for a test of
// a large backlog: the first is created first and alone, so it is the
// oldest, and it has the nearest deadline (one hour from now; the others
// come later, a second apart). It returns the questions in the order
// their deadlines come.
func FillPending(t testing.TB, s lifecycle.Store, project string, n int) []*domain.Question {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	qs := make([]*domain.Question, n)
	for i := range qs {
		items := []domain.Item{{Question: fmt.Sprintf("Deploy build %05d?", i),
			Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
		qs[i] = &domain.Question{ID: domain.NewQuestionID(project), ProjectID: project, RunID: fmt.Sprintf("fill-%05d", i),
			AgentID: "bot", Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items,
			Targets: []domain.Target{}, CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour + time.Duration(i)*time.Second), Fingerprint: domain.Fingerprint(items)}
	}
	create := func(q *domain.Question) error {
		_, err := s.Create(context.Background(), q)
		return err
	}
	if n > 0 {
		if err := create(qs[0]); err != nil {
			t.Fatalf("creating the oldest question: %v", err)
		}
	}
	// The rest from a few writers at once: a durable store commits them
	// in groups.
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i < n; i += writers {
				if err := create(qs[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("filling %d pending questions: %v", n, err)
	}
	return qs
}
