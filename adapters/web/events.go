package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/admit"
)

// liveEvent is the data of one event on /inbox/events.
type liveEvent struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"project_id"`
	RunID     string    `json:"run_id"`
	Status    string    `json:"status"`
	Title     string    `json:"title"`
	Outcome   string    `json:"outcome"` // "Answered by alice (Slack)"
	ExpiresAt time.Time `json:"expires_at"`
}

func toLive(q *domain.Question) liveEvent {
	return liveEvent{ID: q.ID, ProjectID: q.ProjectID, RunID: q.RunID, Status: string(q.Status),
		Title: title(q), Outcome: finalLine(q), ExpiresAt: q.ExpiresAt}
}

// handleEvents streams the changes to the pending questions the viewer may
// see, as Server-Sent Events:
//
//	sync                  {"count", "page", "more", "questions": [{id, project_id, run_id, expires_at}]}:
//	                      first and after a reconnect, how many wait and the ones the page shows (syncFor)
//	question.created      a new pending question (the page fetches its card)
//	question.updated      a pending question's tally or responders changed (the page refreshes them)
//	question.answered|cancelled|expired   a question left the inbox, with its outcome
//	question.removed      it left the inbox and is no longer kept (or no longer visible)
//	signed-out            the session ended; the page reloads into the sign-in page
//
// The stream follows the store's Watch for every visible project (any
// replica's change wakes it) and compares the pending set against what it
// sent before. Diffing state rather than replaying Store.Events needs no
// stream cursor, cannot skip an event between the page render and the
// stream opening, and recovers from a dropped connection by itself: the
// page re-syncs on every (re)connect.
func (i *Inbox) handleEvents(w http.ResponseWriter, r *http.Request) {
	sess, ok := i.readSession(r)
	var v *viewer
	if ok {
		v = i.resolve(sess)
	}
	if v == nil {
		http.Error(w, "sign in to follow the inbox", http.StatusUnauthorized)
		return
	}
	ctx := r.Context()
	projects, err := i.projects(ctx, v)
	if err != nil {
		i.log.Error("live inbox: listing projects failed", "err", err)
		http.Error(w, "the inbox is unavailable", http.StatusServiceUnavailable)
		return
	}
	admit.LongLived(ctx) // a stream: its connection's place goes to the next
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a live stream outlasts the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	s := &stream{i: i, w: w, rc: rc, known: map[string]map[string]string{}, stops: map[string]func(){},
		kick: make(chan struct{}, 1), dirty: map[string]bool{}, done: make(chan struct{})}
	defer s.close()
	if err := s.send("retry: 2000\n\n"); err != nil {
		return
	}
	for _, p := range projects {
		s.watch(p)
	}
	// Watches are registered before the first listing: nothing that happens
	// after the sync is missed.
	pending := []syncEntry{}
	for _, p := range projects {
		qs, err := i.pending(ctx, p)
		if err != nil {
			i.log.Error("live inbox: listing questions failed", "project", p, "err", err)
			return
		}
		cur := make(map[string]string, len(qs))
		for _, q := range qs {
			cur[q.ID] = cardVersion(q)
			pending = append(pending, syncEntry{ID: q.ID, ProjectID: q.ProjectID, RunID: q.RunID, ExpiresAt: q.ExpiresAt})
		}
		s.known[p] = cur
	}
	if s.event("sync", syncFor(pending, r.URL.Query())) != nil {
		return
	}

	tick := time.NewTicker(i.syncEvery)
	defer tick.Stop()
	lastWrite := time.Now()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			for _, p := range s.takeDirty() {
				if err := s.diff(ctx, p); err != nil {
					return
				}
			}
			lastWrite = time.Now()
		case <-tick.C:
			// The session may have ended, the operator may have lost
			// access, or (all projects) a new project may have asked.
			sess, ok := i.readSession(r) // false once it expired
			var nv *viewer
			if ok {
				nv = i.resolve(sess)
			}
			if nv == nil {
				_ = s.event("signed-out", map[string]any{})
				return
			}
			now, err := i.projects(ctx, nv)
			if err != nil {
				continue
			}
			if s.reconcile(ctx, now, n%10 == 0) != nil {
				return
			}
			if time.Since(lastWrite) > 15*time.Second {
				if s.send(": keep-alive\n\n") != nil {
					return
				}
				lastWrite = time.Now()
			}
		}
	}
}

// syncFor is the sync event for a page: how many questions wait, the
// page of the inbox it shows (?page=, nearest deadline first, as the inbox
// pages them), and the pending questions of the question (?question=) or
// run (?project= and ?run=) it shows. Only these travel, so the event
// stays a few kilobytes however many wait (every pending question made
// 1.3 MB at 10,000).
func syncFor(pending []syncEntry, query url.Values) map[string]any {
	sort.Slice(pending, func(a, b int) bool {
		if !pending[a].ExpiresAt.Equal(pending[b].ExpiresAt) {
			return pending[a].ExpiresAt.Before(pending[b].ExpiresAt)
		}
		return pending[a].ID < pending[b].ID
	})
	pg := makePaging(len(pending), pageParam(query), func(int) string { return "" })
	shown := []syncEntry{}
	question, project, run := query.Get("question"), query.Get("project"), query.Get("run")
	for k, e := range pending {
		onPage := pg.First > 0 && k >= pg.First-1 && k < pg.Last
		if onPage || e.ID == question || (run != "" && e.RunID == run && e.ProjectID == project) {
			shown = append(shown, e)
		}
	}
	// more: pending questions due after the last of the page, which the
	// page does not show and the event does not name.
	return map[string]any{"count": len(pending), "page": pg.Page, "more": pg.Last < len(pending), "questions": shown}
}

// syncEntry is one pending question in the sync event.
type syncEntry struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"project_id"`
	RunID     string    `json:"run_id"`
	ExpiresAt time.Time `json:"expires_at"` // the inbox adds only cards of the page it shows
}

type stream struct {
	i     *Inbox
	w     http.ResponseWriter
	rc    *http.ResponseController
	known map[string]map[string]string // project → pending id → what its card shows that can change (cardVersion)
	stops map[string]func()
	wg    sync.WaitGroup
	done  chan struct{}

	mu    sync.Mutex
	dirty map[string]bool
	kick  chan struct{}
}

func (s *stream) watch(p string) {
	wake, stop := s.i.router.Watch(p, "")
	s.stops[p] = stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.done:
				return
			case _, ok := <-wake:
				if !ok {
					return
				}
				s.mu.Lock()
				s.dirty[p] = true
				s.mu.Unlock()
				select {
				case s.kick <- struct{}{}:
				default:
				}
			}
		}
	}()
}

func (s *stream) takeDirty() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []string
	for p := range s.dirty {
		if _, ok := s.stops[p]; ok {
			ps = append(ps, p)
		}
	}
	clear(s.dirty)
	return ps
}

func (s *stream) close() {
	close(s.done)
	for _, stop := range s.stops {
		stop()
	}
	s.wg.Wait()
}

// reconcile follows a change of the visible projects; full also re-diffs
// every project, a safety net for a wake lost in transit.
func (s *stream) reconcile(ctx context.Context, projects []string, full bool) error {
	now := map[string]bool{}
	for _, p := range projects {
		now[p] = true
		if _, ok := s.stops[p]; !ok {
			s.watch(p)
			s.known[p] = map[string]string{}
			if err := s.diff(ctx, p); err != nil {
				return err
			}
		} else if full {
			if err := s.diff(ctx, p); err != nil {
				return err
			}
		}
	}
	for p, stop := range s.stops {
		if now[p] {
			continue
		}
		stop()
		delete(s.stops, p)
		for id := range s.known[p] {
			if err := s.event("question.removed", liveEvent{ID: id, ProjectID: p}); err != nil {
				return err
			}
		}
		delete(s.known, p)
	}
	return nil
}

// diff sends what changed in project p since the last look. Only a failed
// write ends the stream; a store error is retried on the next wake or tick.
func (s *stream) diff(ctx context.Context, p string) error {
	qs, err := s.i.pending(ctx, p)
	if err != nil {
		s.i.log.Warn("live inbox: listing questions failed", "project", p, "err", err)
		return nil
	}
	cur := make(map[string]string, len(qs))
	for _, q := range qs {
		cur[q.ID] = cardVersion(q)
		was, known := s.known[p][q.ID]
		switch {
		case !known:
			if err := s.event(domain.EventCreated, toLive(q)); err != nil {
				return err
			}
		case was != cur[q.ID]:
			if err := s.event(eventUpdated, toLive(q)); err != nil {
				return err
			}
		}
	}
	for id := range s.known[p] {
		if _, ok := cur[id]; ok {
			continue
		}
		q, err := s.i.router.Question(ctx, p, id)
		if err != nil {
			err = s.event("question.removed", liveEvent{ID: id, ProjectID: p})
		} else {
			err = s.event(domain.EventForStatus(q.Status), toLive(q))
		}
		if err != nil {
			return err
		}
	}
	s.known[p] = cur
	return nil
}

// eventUpdated tells the page that a pending question's card changed: a
// vote moved the tally, escalation added people who may answer, or a
// remark came (its page acknowledged).
const eventUpdated = "question.updated"

// cardVersion is what a pending card shows that can change while it stays
// pending.
func cardVersion(q *domain.Question) string {
	v := domain.TallyLine(q) + "\x00" + domain.DescribeResponders(q.Responders)
	for _, r := range q.Remarks {
		v += "\x00" + r.Text
	}
	return v
}

func (s *stream) event(typ string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return s.send(fmt.Sprintf("event: %s\ndata: %s\n\n", typ, b))
}

func (s *stream) send(raw string) error {
	if _, err := s.w.Write([]byte(raw)); err != nil {
		return err
	}
	return s.rc.Flush()
}
