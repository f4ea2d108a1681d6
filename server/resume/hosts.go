package resume

import "time"

// hosts is the per-destination side of fairness: how many deliveries are in
// flight to each host, and a circuit that, once a host fails, lets one
// delivery probe it at a time after a growing pause. A dead or slow receiver
// holds at most PerHost workers (one once it fails) and only its own
// deliveries wait for it. Guarded by Deliverer.mu.
type hosts struct {
	perHost       int
	min, max      time.Duration
	busyMin       time.Duration
	state         map[string]*hostState
	totalInFlight int
}

type hostState struct {
	starts    []time.Time // start of each delivery in flight
	failures  int         // consecutive failed attempts
	openUntil time.Time   // no attempt before this (after a failure)
}

func newHosts(perHost int, min, max time.Duration) *hosts {
	return &hosts{perHost: perHost, min: min, max: max, busyMin: 50 * time.Millisecond, state: map[string]*hostState{}}
}

func (h *hosts) get(host string) *hostState {
	s := h.state[host]
	if s == nil {
		s = &hostState{}
		h.state[host] = s
	}
	return s
}

// admit reports whether a delivery to host may start now; if not, when it
// is worth trying again.
func (h *hosts) admit(host string, now time.Time) (ok bool, retryAt time.Time) {
	s := h.get(host)
	limit := h.perHost
	if s.failures > 0 {
		limit = 1 // half open: one probe at a time
	}
	if now.Before(s.openUntil) {
		return false, s.openUntil
	}
	if len(s.starts) < limit {
		s.starts = append(s.starts, now)
		h.totalInFlight++
		return true, time.Time{}
	}
	// Busy: come back after about as long as the oldest delivery in flight
	// has taken so far (a slow or silent host is asked less and less often).
	wait := now.Sub(s.starts[0])
	if s.failures > 0 { // a probe is out: wait as long as a failed host pauses
		wait = max(wait, h.pause(s.failures))
	}
	wait = max(h.busyMin, min(wait, h.max))
	return false, maxTime(s.openUntil, now.Add(wait))
}

// busy reports whether host is healthy but has as many deliveries in
// flight as it may (neither failing nor paused).
func (h *hosts) busy(host string, now time.Time) bool {
	s := h.state[host]
	return s != nil && s.failures == 0 && !now.Before(s.openUntil) && len(s.starts) >= h.perHost
}

// pausedUntil is when host may be tried again: now, or the end of its
// pause after a failure.
func (h *hosts) pausedUntil(host string, now time.Time) time.Time {
	if s := h.state[host]; s != nil {
		return maxTime(s.openUntil, now)
	}
	return now
}

// room is how many more deliveries to host may start now.
func (h *hosts) room(host string, now time.Time) int {
	s := h.state[host]
	if s == nil {
		return h.perHost
	}
	if now.Before(s.openUntil) {
		return 0
	}
	limit := h.perHost
	if s.failures > 0 {
		limit = 1
	}
	return max(0, limit-len(s.starts))
}

// pause is how long a host rests after its n-th consecutive failure.
func (h *hosts) pause(n int) time.Duration {
	p := h.min
	for i := 1; i < n && p < h.max; i++ {
		p *= 2
	}
	return min(p, h.max)
}

// done records the end of a delivery started at start: ok false opens the
// circuit for a pause that doubles with each consecutive failure.
func (h *hosts) done(host string, start, now time.Time, ok bool) {
	s := h.get(host)
	for i, t := range s.starts {
		if t.Equal(start) {
			s.starts = append(s.starts[:i], s.starts[i+1:]...)
			break
		}
	}
	h.totalInFlight--
	if ok {
		s.failures = 0
		s.openUntil = time.Time{}
	} else {
		s.failures++
		s.openUntil = now.Add(h.pause(s.failures))
	}
	if len(s.starts) == 0 && s.failures == 0 {
		delete(h.state, host)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
