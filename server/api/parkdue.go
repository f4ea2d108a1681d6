package api

import (
	"container/heap"
	"time"
)

// The times of parked waits, their deadlines and their next periodic
// writes, are two min-heaps (parker.due, parker.ticks; guarded by
// parker.mu), each served by one goroutine and one timer (parker.expire,
// parker.tick), not a runtime timer and closure per wait: tens of
// thousands of waits cost a heap slot each (BenchmarkParkedWaiter in
// bench/).

// A clock names one of a parked wait's times.
type clock int

const (
	deadline clock = iota // when the wait times out (parker.due)
	nextTick              // its next periodic write (parker.ticks)
)

// noSlot is a wait in neither heap.
var noSlot = [2]int{-1, -1}

// timeHeap orders parked waits by one of their times; each wait knows its
// slot in it.
type timeHeap struct {
	c  clock
	ws []*parked
}

func (h *timeHeap) Len() int           { return len(h.ws) }
func (h *timeHeap) Less(a, b int) bool { return h.ws[a].at[h.c] < h.ws[b].at[h.c] }
func (h *timeHeap) Swap(a, b int) {
	h.ws[a], h.ws[b] = h.ws[b], h.ws[a]
	h.ws[a].slot[h.c], h.ws[b].slot[h.c] = a, b
}
func (h *timeHeap) Push(x any) {
	pk := x.(*parked)
	pk.slot[h.c] = len(h.ws)
	h.ws = append(h.ws, pk)
}
func (h *timeHeap) Pop() any {
	n := len(h.ws) - 1
	pk := h.ws[n]
	h.ws[n] = nil
	h.ws = h.ws[:n]
	pk.slot[h.c] = -1
	return pk
}

// until is how long until the first wait's time from now (an hour when
// there is none).
func (h *timeHeap) until(now int64) time.Duration {
	if len(h.ws) == 0 {
		return time.Hour
	}
	return time.Duration(h.ws[0].at[h.c] - now)
}

// drop takes pk out, if it is in.
func (h *timeHeap) drop(pk *parked) {
	if s := pk.slot[h.c]; s >= 0 && s < len(h.ws) && h.ws[s] == pk {
		heap.Remove(h, s)
	}
}

// setTime puts pk in h at `at`, unless the wait is already finished; when
// it comes first, the goroutine serving h sleeps too long: wake tells it.
func (p *parker) setTime(h *timeHeap, wake chan struct{}, pk *parked, at time.Time) {
	p.mu.Lock()
	if pk.done {
		p.mu.Unlock()
		return
	}
	pk.at[h.c] = at.UnixNano()
	heap.Push(h, pk)
	first := pk.slot[h.c] == 0
	p.mu.Unlock()
	if first {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// schedule gives pk its deadline, unless the wait is already finished.
func (p *parker) schedule(pk *parked, timeout time.Duration) {
	p.setTime(&p.due, p.nearer, pk, time.Now().Add(timeout))
}

// scheduleTick gives pk its next periodic write, every from now.
func (p *parker) scheduleTick(pk *parked, every time.Duration) {
	p.setTime(&p.ticks, p.sooner, pk, time.Now().Add(every))
}

// unschedule drops a finished wait's times (under p.mu).
func (p *parker) unschedule(pk *parked) {
	p.due.drop(pk)
	p.ticks.drop(pk)
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
		for len(p.due.ws) > 0 && p.due.ws[0].at[deadline] <= now {
			pk := heap.Pop(&p.due).(*parked)
			pk.expired = true
			up = append(up, pk)
		}
		next := p.due.until(now)
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
