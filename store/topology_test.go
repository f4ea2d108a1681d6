package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCluster runs the conformance suite on a real three-master Redis
// Cluster: every script (create with supersede, transition with
// continuation run and delivery, claim, pause) runs on whichever master
// owns the project's slot, and projects spread over all three masters.
func TestCluster(t *testing.T) {
	c, err := storetest.StartCluster(t.TempDir(), 3)
	require.NoError(t, err)
	t.Cleanup(c.Close)

	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) func() lifecycle.Store {
			return func() lifecycle.Store { return open(t, c.URL) }
		})
	})

	t.Run("ProjectsSpreadOverEveryMaster", func(t *testing.T) {
		s := open(t, c.URL)
		ctx := context.Background()
		owners := map[string]bool{}
		for i := range 24 {
			p := fmt.Sprintf("proj%d", i)
			q := pendingQuestion(p)
			_, err := s.Create(ctx, q)
			require.NoError(t, err, "create on the master owning %s", p)
			_, err = s.Transition(ctx, p, q.ID, lifecycle.Transition{To: domain.StatusAnswered, At: time.Now(),
				Answer: &domain.Answer{Response: "yes"}, By: &domain.Person{Platform: "api", ID: "u"}})
			require.NoError(t, err)
			slot, err := s.Client().ClusterKeySlot(ctx, "askbridge:{"+p+"}:q:"+q.ID).Result()
			require.NoError(t, err)
			for _, n := range c.Nodes {
				// A master answers COUNTKEYSINSLOT only for its own slots' data.
				out, _ := n.Cli("cluster", "countkeysinslot", fmt.Sprint(slot))
				if out != "0" && out != "" {
					owners[n.Addr] = true
				}
			}
		}
		assert.Len(t, owners, 3, "questions of 24 projects live on all three masters")
	})
}

func pendingQuestion(project string) *domain.Question {
	now := time.Now().UTC().Truncate(time.Millisecond)
	items := []domain.Item{{Question: "Ship " + uuid.NewString()[:6] + "?", Options: []domain.Option{{Label: "Yes", Value: "yes"}, {Label: "No", Value: "no"}}}}
	return &domain.Question{ID: uuid.NewString(), ProjectID: project, RunID: "run-" + uuid.NewString()[:6], AgentID: "bot",
		Kind: domain.KindQuestion, Status: domain.StatusPending, Questions: items, Targets: []domain.Target{},
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Fingerprint: domain.Fingerprint(items)}
}

// TestSentinel runs the conformance suite through Sentinel, then kills the
// master with SIGKILL: after the Sentinels promote the replica, every
// pending question is still there and can be answered exactly once, new
// questions can be asked, and a watcher is woken again.
func TestSentinel(t *testing.T) {
	sn, err := storetest.StartSentinel(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(sn.Close)

	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) func() lifecycle.Store {
			return func() lifecycle.Store { return open(t, sn.URL) }
		})
	})

	t.Run("QuestionsSurviveFailover", func(t *testing.T) {
		ctx := context.Background()
		s := open(t, sn.URL)
		p := "failover"
		var pending []*domain.Question
		for range 50 {
			q := pendingQuestion(p)
			_, err := s.Create(ctx, q)
			require.NoError(t, err)
			pending = append(pending, q)
		}
		// Acknowledged writes reach the replica before the master dies
		// (what `min-replicas-to-write` / WAIT give in production).
		n, err := s.Client().Do(ctx, "WAIT", 1, 5000).Int()
		require.NoError(t, err)
		require.Equal(t, 1, n, "the replica acknowledged the writes")
		before, _ := sn.MasterAddr()
		require.Equal(t, sn.Primary.Addr, before)

		sn.Primary.Kill()
		start := time.Now()
		require.Eventually(t, func() bool {
			a, err := sn.MasterAddr()
			return err == nil && a == sn.Replica.Addr
		}, 30*time.Second, 100*time.Millisecond, "the Sentinels promote the replica")
		t.Logf("failover took %s", time.Since(start).Round(time.Millisecond))

		// The same client (no restart) reaches the new master.
		require.Eventually(t, func() bool { return s.Ping(ctx) == nil }, 15*time.Second, 50*time.Millisecond)
		list, err := s.List(ctx, p, domain.StatusPending, 100)
		require.NoError(t, err)
		assert.Len(t, list, len(pending), "no pending question was lost")

		wake, stop := s.Watch(p, pending[0].ID)
		defer stop()
		drain(wake)
		var won int
		for range 3 {
			if _, err := s.Transition(ctx, p, pending[0].ID, lifecycle.Transition{To: domain.StatusAnswered, At: time.Now(),
				Answer: &domain.Answer{Response: "yes"}, By: &domain.Person{Platform: "api", ID: "u"}}); err == nil {
				won++
			}
		}
		assert.Equal(t, 1, won, "answered exactly once on the new master")
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			t.Fatal("the watcher was not woken after the failover (the subscriber did not reconnect)")
		}
		q := pendingQuestion(p)
		_, err = s.Create(ctx, q)
		require.NoError(t, err, "new questions after the failover")
		role, err := s.Client().Do(ctx, "ROLE").Slice()
		require.NoError(t, err)
		assert.Equal(t, "master", role[0])
	})
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
