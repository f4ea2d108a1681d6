package api

import (
	"net/http"

	"github.com/askbridge/askbridge/domain"
)

func (a *API) runFor(r *http.Request, p Principal) (*domain.Run, error) {
	run, err := a.store.Run(r.Context(), r.PathValue("p"), r.PathValue("run"))
	if err != nil {
		return nil, err
	}
	if p.Agent != nil && run.AgentID != p.Agent.ID {
		return nil, domain.Errorf(domain.ENotFound, "no run %s in project %s", r.PathValue("run"), r.PathValue("p"))
	}
	return run, nil
}

func (a *API) run(w http.ResponseWriter, r *http.Request, p Principal) error {
	run, err := a.runFor(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (a *API) pause(w http.ResponseWriter, r *http.Request, p Principal) error {
	agentID := ""
	if p.Agent != nil {
		agentID = p.Agent.ID
		if run, err := a.store.Run(r.Context(), r.PathValue("p"), r.PathValue("run")); err == nil && run.AgentID != agentID {
			return domain.Errorf(domain.ENotFound, "no run %s in project %s", r.PathValue("run"), r.PathValue("p"))
		}
	}
	run, err := a.store.PauseRun(r.Context(), r.PathValue("p"), r.PathValue("run"), agentID, a.router.Clock().Now().UTC())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (a *API) runQuestions(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil { // another agent's run is not found, as for the run itself
		if _, err := a.runFor(r, p); err != nil {
			return err
		}
	}
	qs, err := a.store.RunQuestions(r.Context(), r.PathValue("p"), r.PathValue("run"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": visible(qs, p)})
	return nil
}
