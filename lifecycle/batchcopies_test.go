package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batcher is a recorder that shows a batch as one message
// (lifecycle.BatchChannel): it records each batch message it posts and
// every re-render, as "<pending>/<calls>".
type batcher struct {
	recorder
	batchPosts []string
	renders    []string
	failPost   int // the next n Posts fail
}

func (b *batcher) PostBatch(_ context.Context, bt *domain.Batch, t domain.Target) (domain.Target, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	t.MessageTS = fmt.Sprintf("%s-%d", t.Channel, b.n)
	b.batchPosts = append(b.batchPosts, fmt.Sprintf("%d/%d", bt.Pending, len(bt.Questions)))
	return t, nil
}

func (b *batcher) UpdateBatch(_ context.Context, bt *domain.Batch, t domain.Target) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.renders = append(b.renders, fmt.Sprintf("%s %d/%d", t.MessageTS, bt.Pending, len(bt.Questions)))
	return nil
}

func (b *batcher) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	b.mu.Lock()
	if b.failPost > 0 {
		b.failPost--
		b.mu.Unlock()
		return t, errors.New("channel_not_found")
	}
	b.mu.Unlock()
	return b.recorder.Post(ctx, q, t)
}

func batchFixture(t *testing.T) (*lifecycle.Router, *batcher, *recorder) {
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Now().UTC()}
	b := &batcher{recorder: recorder{platform: "slack", clock: c}}
	plain := &recorder{platform: "discord", clock: c}
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: c, Channels: []lifecycle.Channel{b, plain},
		PostTimeout: 2 * time.Second, CopyRetryBackoff: 5 * time.Millisecond, HasWebhookSecret: func(string) bool { return true }})
	t.Cleanup(func() { r.Close(ctx) })
	return r, b, plain
}

var twoSurfaces = []domain.Target{{Platform: "slack", Channel: "C1"}, {Platform: "discord", Channel: "D1"}}

// TestBatchIsOneMessageWhereTheSurfaceCan: a batch of three is one message
// on a surface that shows batches (every call's copy is it) and one per
// call on a surface that cannot; a fourth call joining re-renders the
// message, and every decision re-renders it instead of finishing a copy.
func TestBatchIsOneMessageWhereTheSurfaceCan(t *testing.T) {
	r, b, plain := batchFixture(t)
	req := batchOf("turn-1", "rm -rf build1", "rm -rf build2", "rm -rf build3")
	req.Targets = twoSurfaces
	res, err := r.AskBatch(ctx, "ops", req, "")
	require.NoError(t, err)
	require.NoError(t, r.Flush(ctx))
	assert.Equal(t, []string{"3/3"}, b.batchPosts, "the batch's message on the surface that shows batches")
	assert.Empty(t, b.posted, "no call posted on its own there")
	assert.Len(t, plain.posted, 3, "one message per call where the surface cannot show a batch")
	ts := ""
	for _, q := range res.Questions {
		fresh, err := r.Question(ctx, "ops", q.ID)
		require.NoError(t, err)
		for _, c := range fresh.Targets {
			if c.Platform == "slack" {
				if ts == "" {
					ts = c.MessageTS
				}
				assert.Equal(t, ts, c.MessageTS, "call %s's copy is the batch's message", q.ID)
			}
		}
	}

	in := bash("turn-1", "toolu_4", "rm -rf build4")
	in.Targets = twoSurfaces
	fourth, err := r.Ask(ctx, "ops", in, "")
	require.NoError(t, err)
	require.Equal(t, res.BatchID, fourth.Question.BatchID)
	require.NoError(t, r.Flush(ctx))
	assert.Equal(t, []string{"3/3"}, b.batchPosts, "joining posts nothing new")
	assert.Contains(t, b.get(func() []string { return b.renders }), ts+" 4/4", "the message re-rendered with the 4th call")

	_, err = r.DecideBatch(ctx, "ops", res.BatchID, domain.BatchRespondRequest{Decision: domain.DecideAllow}, slackP("U1"), false)
	require.NoError(t, err)
	require.NoError(t, r.Flush(ctx))
	renders := b.get(func() []string { return b.renders })
	assert.Equal(t, ts+" 0/4", renders[len(renders)-1], "the last render shows every call decided")
	assert.Empty(t, b.get(func() []string { return b.finished }), "no call's copy finished on its own: it is the batch's message")
	assert.Len(t, plain.get(func() []string { return plain.finished }), 4)
}

// TestBatchCallsFallBackWhenTheMessageFailed: when the batch's first post
// failed, a later call does not wait for a message that will never come:
// it posts one of its own.
func TestBatchCallsFallBackWhenTheMessageFailed(t *testing.T) {
	r, b, _ := batchFixture(t)
	b.failPost = 1
	first := bash("turn-2", "toolu_1", "make a")
	first.Targets = twoSurfaces[:1]
	res1, err := r.Ask(ctx, "ops", first, "")
	require.NoError(t, err)
	require.NotEmpty(t, res1.Question.Targets[0].Error)
	second := bash("turn-2", "toolu_2", "make b")
	second.Targets = twoSurfaces[:1]
	start := time.Now()
	res2, err := r.Ask(ctx, "ops", second, "")
	require.NoError(t, err)
	assert.Less(t, time.Since(start), time.Second, "the second call waited for a message that failed")
	assert.Equal(t, res1.Question.BatchID, res2.Question.BatchID)
	assert.NotEmpty(t, res2.Question.Targets[0].MessageTS, "the second call posted a message of its own")
	assert.Empty(t, res2.Question.Targets[0].Error)
}

// TestConcurrentCallsOfABatchPostOnce: calls asked at the same moment
// (concurrent hooks) post the batch's message once, whichever comes first.
func TestConcurrentCallsOfABatchPostOnce(t *testing.T) {
	r, b, _ := batchFixture(t)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := bash("turn-3", fmt.Sprintf("toolu_%d", i), fmt.Sprintf("make %d", i))
			in.Targets = twoSurfaces[:1]
			_, err := r.Ask(ctx, "ops", in, "")
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	require.NoError(t, r.Flush(ctx))
	assert.Equal(t, 1, len(b.get(func() []string { return b.batchPosts }))+len(b.posted), "messages posted for five concurrent calls of one batch")
}

// slowSiblings is a store whose claims (Scratch.Once) after the first wait
// at gate: the batch's other calls, whose own posts start with a claim,
// are held back while the first call posts the batch's message.
type slowSiblings struct {
	lifecycle.Store
	gate   chan struct{}
	mu     sync.Mutex
	claims int
}

func (s *slowSiblings) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	s.claims++
	n := s.claims
	s.mu.Unlock()
	if n > 1 && strings.HasPrefix(key, "batchcopy:") {
		select {
		case <-s.gate:
		case <-ctx.Done():
		}
	}
	return s.Store.Once(ctx, key, ttl)
}

// TestBatchMessageNamesEveryCallItShows: once a batch's message is posted,
// every call it shows has it as its copy at once — not only when each
// call's own post comes round — so an Allow all pressed the moment the
// message appears decides every call it shows (with the real Claude Code
// CLI, a press within ~100 ms decided only the first call, and a second
// "Allow all" was needed).
func TestBatchMessageNamesEveryCallItShows(t *testing.T) {
	st, err := store.Open(ctx, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Now().UTC()}
	b := &batcher{recorder: recorder{platform: "slack", clock: c}}
	slow := &slowSiblings{Store: st, gate: make(chan struct{})}
	r := lifecycle.NewRouter(lifecycle.RouterConfig{Store: slow, Clock: c, Channels: []lifecycle.Channel{b},
		PostTimeout: 5 * time.Second, CopyRetryBackoff: 5 * time.Millisecond, HasWebhookSecret: func(string) bool { return true }})
	t.Cleanup(func() { r.Close(ctx) })
	t.Cleanup(func() {
		select {
		case <-slow.gate:
		default:
			close(slow.gate)
		}
	})

	req := batchOf("turn-1", "rm -rf build1", "rm -rf build2", "rm -rf build3")
	req.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
	// AskBatch posts before it returns: ask in the background, read the store.
	asked := make(chan lifecycle.BatchResult, 1)
	go func() {
		res, err := r.AskBatch(ctx, "ops", req, "")
		assert.NoError(t, err)
		asked <- res
	}()
	for deadline := time.Now().Add(3 * time.Second); len(b.get(func() []string { return b.batchPosts })) == 0; time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the batch's message was not posted")
	}
	require.Equal(t, []string{"3/3"}, b.get(func() []string { return b.batchPosts }))
	// The siblings are held; the calls the message shows must name it already.
	ids, err := st.RunQuestions(ctx, "ops", "turn-1")
	require.NoError(t, err)
	require.Len(t, ids, 3)
	deadline := time.Now().Add(2 * time.Second)
	var linked int
	for {
		linked = 0
		for _, q := range ids {
			fresh, err := st.Get(ctx, "ops", q.ID)
			require.NoError(t, err)
			for _, tg := range fresh.Targets {
				if tg.MessageTS != "" && tg.Refs[lifecycle.BatchRef] == q.BatchID {
					linked++
				}
			}
		}
		if linked == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if linked != 3 {
		for _, q := range ids {
			fresh, _ := st.Get(ctx, "ops", q.ID)
			t.Logf("%s targets %+v", q.ID, fresh.Targets)
		}
	}
	assert.Equal(t, 3, linked, "calls whose copy is the batch's message while the message shows 3")
	close(slow.gate)
	<-asked
	require.NoError(t, r.Flush(ctx))
	assert.Equal(t, []string{"3/3"}, b.get(func() []string { return b.batchPosts }), "still one message")
}
