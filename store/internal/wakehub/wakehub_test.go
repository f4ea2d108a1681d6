package wakehub

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
)

// TestEveryWatcherOfAKeyIsWokenUntilItStops: watchers of one key stop in
// any order (first, middle, last, twice); a wake-up reaches exactly those
// still watching, the counts follow, and a key nobody watches is gone.
func TestEveryWatcherOfAKeyIsWokenUntilItStops(t *testing.T) {
	h := New()
	key := Key("ops", "q1")
	woken := make([]int, 5)
	stops := make([]func(), 5)
	for i := range stops {
		stops[i] = h.WatchFinal(key, func(*domain.Question) { woken[i]++ })
	}
	ch, stopCh := h.Watch(key)
	other := h.WatchFinal(Key("ops", "q2"), func(*domain.Question) { t.Error("another key's watcher was woken") })
	defer other()

	wake := func() []int {
		clear(woken)
		h.Wake(key, nil)
		return append([]int(nil), woken...)
	}
	assert.Equal(t, []int{1, 1, 1, 1, 1}, wake())
	<-ch // the channel watcher is woken too
	assert.Equal(t, []Count{{Project: "ops", Question: 7}}, h.Counts())

	stops[0]()
	stops[2]()
	stops[4]()
	stops[2]() // again: nothing
	assert.Equal(t, []int{0, 1, 0, 1, 0}, wake())
	assert.True(t, h.HasFinal(key))
	assert.Len(t, h.FinalWatchers(key), 2)
	assert.Equal(t, []Count{{Project: "ops", Question: 4}}, h.Counts())

	stops[1]()
	stops[3]()
	assert.Equal(t, []int{0, 0, 0, 0, 0}, wake())
	assert.False(t, h.HasFinal(key))
	stopCh()
	assert.Equal(t, []Count{{Project: "ops", Question: 1}}, h.Counts())
	h.mu.Lock()
	_, left := h.watchers[key]
	h.mu.Unlock()
	assert.False(t, left, "a key nobody watches is forgotten")

	// Watching again after everyone stopped works as the first time.
	again := 0
	stop := h.WatchFinal(key, func(*domain.Question) { again++ })
	h.Wake(key, nil)
	stop()
	assert.Equal(t, 1, again)
}
