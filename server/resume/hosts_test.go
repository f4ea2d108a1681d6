package resume

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHostCircuit on an injected clock: a healthy host takes PerHost
// deliveries at once; after a failure it rests, then takes one probe at a
// time, resting twice as long after each further failure (capped); one
// success restores it. Other hosts are never affected.
func TestHostCircuit(t *testing.T) {
	h := newHosts(2, time.Second, 8*time.Second)
	now := time.Unix(1e9, 0)
	ok1, _ := h.admit("dead:80", now)
	ok2, _ := h.admit("dead:80", now)
	ok3, retry := h.admit("dead:80", now)
	assert.True(t, ok1 && ok2)
	assert.False(t, ok3, "at most PerHost in flight")
	assert.Equal(t, now.Add(50*time.Millisecond), retry, "busy: try again shortly")
	okOther, _ := h.admit("healthy:80", now)
	assert.True(t, okOther, "another host is not affected")

	later := now.Add(15 * time.Second) // both attempts time out
	h.done("dead:80", now, later, false)
	h.done("dead:80", now, later, false)
	ok, retry := h.admit("dead:80", later)
	assert.False(t, ok, "a failed host rests")
	assert.Equal(t, later.Add(2*time.Second), retry, "two failures: 1 s doubled")
	probeAt := later.Add(2 * time.Second)
	ok, _ = h.admit("dead:80", probeAt)
	assert.True(t, ok, "then one probe")
	ok, retry = h.admit("dead:80", probeAt)
	assert.False(t, ok, "only one probe at a time")
	assert.Equal(t, probeAt.Add(2*time.Second), retry)
	for i := range 5 {
		h.done("dead:80", probeAt, probeAt, false)
		_, retry = h.admit("dead:80", probeAt)
		assert.LessOrEqual(t, retry.Sub(probeAt), 8*time.Second, "pause capped (failure %d)", i)
		ok, _ = h.admit("dead:80", retry)
		assert.True(t, ok)
		probeAt = retry
	}
	h.done("dead:80", probeAt, probeAt, true)
	ok1, _ = h.admit("dead:80", probeAt)
	ok2, _ = h.admit("dead:80", probeAt)
	assert.True(t, ok1 && ok2, "one success restores full concurrency")
}
