package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/admit"
)

// sseEvent is the data of one Server-Sent Event.
type sseEvent struct {
	Type       string           `json:"type"`
	ProjectID  string           `json:"project_id"`
	QuestionID string           `json:"question_id,omitempty"`
	RunID      string           `json:"run_id,omitempty"`
	At         time.Time        `json:"at"`
	Question   *domain.Question `json:"question,omitempty"`
	Run        *domain.Run      `json:"run,omitempty"`
}

// events streams a project's events (docs/openapi.yaml). Last-Event-ID (header or
// ?last_event_id=) resumes after that event; without it the stream starts
// with events from now on.
func (a *API) events(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "the event stream is for operators; use an operator token")
	}
	project := r.PathValue("p")
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		after = r.URL.Query().Get("last_event_id")
	}
	wake, stop := a.store.Watch(project, "")
	defer stop()
	if after == "" {
		// Start from the newest event so only new ones are sent.
		evs, err := a.tailID(r, project)
		if err != nil {
			return err
		}
		after = evs
	} else if _, err := a.store.Events(r.Context(), project, after, 1); err != nil {
		return err
	}
	admit.LongLived(r.Context()) // a stream: its connection's place goes to the next
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	rc.Flush()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	for {
		evs, err := a.store.Events(r.Context(), project, after, 100)
		if err != nil {
			return nil // headers are sent; the client reconnects with Last-Event-ID
		}
		for _, ev := range evs {
			data := sseEvent{Type: ev.Type, ProjectID: project, QuestionID: ev.QuestionID, RunID: ev.RunID, At: ev.At}
			if ev.QuestionID != "" {
				if q, err := a.store.Get(r.Context(), project, ev.QuestionID); err == nil {
					data.Question = public(q)
				}
			} else if ev.RunID != "" {
				data.Run, _ = a.store.Run(r.Context(), project, ev.RunID)
			}
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, b)
			after = ev.ID
		}
		if len(evs) > 0 {
			rc.Flush()
		}
		if len(evs) == 100 {
			continue
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-wake:
		case <-heartbeat.C:
			fmt.Fprint(w, ": heartbeat\n\n")
			rc.Flush()
		}
	}
}

// tailID finds the id of the newest event.
func (a *API) tailID(r *http.Request, project string) (string, error) {
	return a.store.LastEventID(r.Context(), project)
}
