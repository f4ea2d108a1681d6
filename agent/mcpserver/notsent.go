package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/agent/internal/reach"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// continueWithout tells the model what to do when no answer will come.
const continueWithout = "Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made."

// notSent is the result of an ask the bridge did not take. The model is
// asked to fix only what it wrote (the questions); a setting of the
// operator's (BRIDGE_ROUTE, the token, the bridge's address) is the
// operator's to fix: it goes to the log, where the operator reads it, and
// the model learns only that the question could not be sent.
func (s *Server) notSent(err error, b Backend) *mcp.CallToolResult {
	var e *domain.Error
	if !errors.As(err, &e) {
		s.log.Error("the question was not sent: " + s.transportProblem(err, b))
		return result(true, "The question was not sent: askbridge could not be reached. "+continueWithout, newOutput(StatusNotSent))
	}
	if e.Code == domain.EInvalid && len(e.Details) > 0 && !slices.ContainsFunc(e.Details, notTheModels) {
		out := newOutput(StatusInvalid)
		var ps []string
		for _, d := range e.Details {
			ps = append(ps, d.Field+": "+d.Problem)
		}
		return result(true, "The question was not sent: "+e.Message+" ("+strings.Join(ps, "; ")+"). Fix these and call ask_user again.", out)
	}
	s.log.Error("the question was not sent: " + operatorProblem(e, s.cfg.Route))
	if e.Code == domain.EInvalid {
		return result(true, "The question could not be sent. "+continueWithout, newOutput(StatusNotSent))
	}
	return result(true, "The question was not sent: "+e.Message+". "+continueWithout, newOutput(StatusNotSent))
}

// notTheModels reports a problem with something the model did not write:
// the tool's input is the questions only.
func notTheModels(d domain.Detail) bool {
	return d.Field != "questions" && !strings.HasPrefix(d.Field, "questions[") && !strings.HasPrefix(d.Field, "questions.")
}

// operatorProblem words a refusal for the operator, naming the setting.
func operatorProblem(e *domain.Error, route string) string {
	var ps []string
	for _, d := range e.Details {
		p := d.Field + ": " + d.Problem
		if d.Field == "route" && route != "" {
			p = fmt.Sprintf("BRIDGE_ROUTE=%s: %s; unset BRIDGE_ROUTE or name a route of the bridge's configuration", route, d.Problem)
		}
		ps = append(ps, p)
	}
	msg := e.Code + ": " + e.Message
	if len(ps) > 0 {
		msg += " (" + strings.Join(ps, "; ") + ")"
	}
	return msg
}

// transportProblem words an error that kept the ask from the bridge.
func (s *Server) transportProblem(err error, b Backend) string {
	if u, ok := b.(interface{ URL() string }); ok {
		if msg := reach.Problem(u.URL(), err); msg != "" {
			return msg
		}
	}
	return err.Error()
}

// CheckBridge tells the operator, in the log, what would make every call
// fail: no bridge at BRIDGE_URL, or a BRIDGE_ROUTE the bridge has no route
// of. It asks nothing; a bridge too old to list its routes is not checked.
func (s *Server) CheckBridge(ctx context.Context) {
	c := s.cfg.Client
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	routes, err := c.Routes(ctx)
	var e *domain.Error
	switch {
	case err == nil:
	case errors.As(err, &e) && e.Code == domain.ENotFound:
		return // a bridge without GET …/routes
	case errors.As(err, &e):
		s.log.Warn("the bridge refused to list its routes: " + operatorProblem(e, ""))
		return
	default:
		if ctx.Err() == nil {
			s.log.Warn(s.transportProblem(err, c))
		}
		return
	}
	if s.cfg.Route == "" {
		return
	}
	var names []string
	for _, r := range routes {
		if r.Name == s.cfg.Route {
			return
		}
		names = append(names, r.Name)
	}
	have := "it has none"
	if len(names) > 0 {
		have = "its routes: " + strings.Join(names, ", ")
	}
	s.log.Error(fmt.Sprintf("BRIDGE_ROUTE=%s: the bridge at %s has no route named %q (%s); every question will fail until BRIDGE_ROUTE is unset or names one of its routes",
		s.cfg.Route, c.URL(), s.cfg.Route, have))
}
