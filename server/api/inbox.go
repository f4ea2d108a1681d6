package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

func (a *API) notifications(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "notifications are for operators; use an operator token")
	}
	unread := r.URL.Query().Get("unread") == "true"
	qs, err := a.store.List(r.Context(), r.PathValue("p"), "", 200)
	if err != nil {
		return err
	}
	out := []domain.Notification{}
	for i := len(qs) - 1; i >= 0; i-- { // newest first
		n := domain.NotificationFor(qs[i])
		if unread && n.Read {
			continue
		}
		out = append(out, n)
	}
	writeJSON(w, http.StatusOK, map[string]any{"notifications": out})
	return nil
}

func (a *API) markRead(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "notifications are for operators; use an operator token")
	}
	q, err := a.store.MarkRead(r.Context(), r.PathValue("p"), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, domain.NotificationFor(q))
	return nil
}

// audit returns the project's audit trail, oldest first: ?question=ID
// filters, ?format=jsonl (or Accept: application/x-ndjson) streams JSON lines.
func (a *API) audit(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "the audit trail is for operators; use an operator token")
	}
	entries, err := a.store.Audit(r.Context(), r.PathValue("p"), r.URL.Query().Get("question"), 100000)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("format") == "jsonl" || strings.Contains(r.Header.Get("Accept"), "application/x-ndjson") {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, e := range entries {
			enc.Encode(e)
		}
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries})
	return nil
}
