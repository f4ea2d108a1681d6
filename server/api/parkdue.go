package api

import (
	"container/heap"
	"time"
)

// The deadlines of parked waits are one min-heap (parker.due, guarded by
// parker.mu) served by one goroutine and one timer (parker.expire), not a
// runtime timer and closure per wait: tens of thousands of waits cost a
// heap slot each (BenchmarkParkedWaiter in bench/).

// dueHeap orders parked waits by deadline; each knows its slot.
type dueHeap []*parked

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(a, b int) bool { return h[a].due < h[b].due }
func (h dueHeap) Swap(a, b int) {
	h[a], h[b] = h[b], h[a]
	h[a].slot, h[b].slot = a, b
}
func (h *dueHeap) Push(x any) {
	pk := x.(*parked)
	pk.slot = len(*h)
	*h = append(*h, pk)
}
func (h *dueHeap) Pop() any {
	old := *h
	pk := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	pk.slot = -1
	return pk
}

// schedule gives pk its deadline, unless the wait is already finished.
func (p *parker) schedule(pk *parked, timeout time.Duration) {
	p.mu.Lock()
	if pk.done {
		p.mu.Unlock()
		return
	}
	pk.due = time.Now().Add(timeout).UnixNano()
	heap.Push(&p.due, pk)
	first := pk.slot == 0
	p.mu.Unlock()
	if first { // a new nearest deadline: the expirer sleeps too long
		select {
		case p.nearer <- struct{}{}:
		default:
		}
	}
}

// unschedule drops a finished wait's deadline (under p.mu).
func (p *parker) unschedule(pk *parked) {
	if pk.slot >= 0 && pk.slot < len(p.due) && p.due[pk.slot] == pk {
		heap.Remove(&p.due, pk.slot)
	}
}

// expire answers the waits whose time is up, sleeping until the nearest
// deadline.
func (p *parker) expire() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		now := time.Now().UnixNano()
		var up []*parked
		p.mu.Lock()
		for len(p.due) > 0 && p.due[0].due <= now {
			pk := heap.Pop(&p.due).(*parked)
			pk.expired = true
			up = append(up, pk)
		}
		next := time.Hour
		if len(p.due) > 0 {
			next = time.Duration(p.due[0].due - now)
		}
		p.mu.Unlock()
		for _, pk := range up {
			p.enqueue(pk)
		}
		t.Reset(next)
		select {
		case <-p.stop:
			return
		case <-p.nearer:
		case <-t.C:
		}
	}
}
