package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/throttle"
)

// Agent is an agent allowed to ask (config agents[]).
type Agent struct {
	ID      string
	Project string
	Token   string
	Tools   []string
	Route   string
	// WebhookSecret overrides the bridge's resume webhook secret.
	WebhookSecret string
}

// HasTool reports whether the agent may use a tool.
func (a *Agent) HasTool(name string) bool { return slices.Contains(a.Tools, name) }

// Operator may list, respond and cancel in its projects (config operators[]).
type Operator struct {
	ID       string
	Projects []string // "*" = every project
	Token    string
	// ActFor lets the operator relay answers for other people
	// (responded_by); see respondent.
	ActFor bool
}

// Principal is who a request acts for.
type Principal struct {
	Agent    *Agent
	Operator *Operator
	Open     bool // no tokens configured: the embedded default on loopback
}

// Auth resolves bearer tokens to principals, comparing in constant time.
type Auth struct {
	agents    []*Agent
	operators []*Operator
	agentByID map[string]*Agent
	// guesses throttles failed authentications per client address and
	// per token prefix (the API and the web inbox's sign-in share it).
	guesses *throttle.Limiter
}

// NewAuth builds an Auth. With no agents and no operators, every request is
// open.
func NewAuth(agents []Agent, operators []Operator) *Auth {
	a := &Auth{agentByID: map[string]*Agent{}, guesses: &throttle.Limiter{}}
	for i := range agents {
		ag := agents[i]
		a.agents = append(a.agents, &ag)
		a.agentByID[ag.ID] = &ag
	}
	for i := range operators {
		op := operators[i]
		a.operators = append(a.operators, &op)
	}
	return a
}

// Open reports whether no tokens are configured.
func (a *Auth) Open() bool { return len(a.agents) == 0 && len(a.operators) == 0 }

// AgentsConfigured reports whether agents[] is set (then only they may ask).
func (a *Auth) AgentsConfigured() bool { return len(a.agents) > 0 }

// AgentByID finds a configured agent.
func (a *Auth) AgentByID(id string) (*Agent, bool) {
	ag, ok := a.agentByID[id]
	return ag, ok
}

// Operator implements the web inbox's Authenticator.
func (a *Auth) Operator(token string) (string, []string, bool) {
	for _, op := range a.operators {
		if tokenEqual(op.Token, token) {
			return op.ID, op.Projects, true
		}
	}
	return "", nil, false
}

// tokenEqual compares in constant time (hashing first so the length of the
// secret does not leak either).
func tokenEqual(want, got string) bool {
	if want == "" || got == "" {
		return false
	}
	w, g := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(w[:], g[:]) == 1
}

// Authenticate reads the bearer token of r.
func (a *Auth) Authenticate(r *http.Request) (Principal, error) {
	if a.Open() {
		return Principal{Open: true}, nil
	}
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || token == "" {
		return Principal{}, domain.Errorf(domain.EUnauthorized, "missing bearer token: send Authorization: Bearer <token>")
	}
	addr := throttle.ClientAddr(r)
	if err := a.TooMany(addr); err != nil {
		return Principal{}, err
	}
	// Check every token so timing does not tell which kind matched.
	var p Principal
	for _, ag := range a.agents {
		if tokenEqual(ag.Token, token) {
			p.Agent = ag
		}
	}
	for _, op := range a.operators {
		if tokenEqual(op.Token, token) && p.Agent == nil {
			p.Operator = op
		}
	}
	if p.Agent == nil && p.Operator == nil {
		if err := a.Failed(addr, token); err != nil {
			return Principal{}, err
		}
		return Principal{}, domain.Errorf(domain.EUnauthorized, "invalid token")
	}
	return p, nil
}

// TooMany refuses, before any token is checked (API bearer tokens, the
// inbox's sign-in), a client address that has
// spent its budget of failed authentications. Other addresses, and so the
// rightful user elsewhere, are unaffected.
func (a *Auth) TooMany(addr string) error {
	if wait := a.guesses.Wait("addr:" + addr); wait > 0 {
		return rateLimited(wait)
	}
	return nil
}

// Failed counts a failed authentication from addr with token (the API's
// bearer token, the inbox's sign-in) and returns the 429 to answer instead
// of the refusal when the address or the token's prefix is over its budget.
// A right token never counts, so guesses at its prefix never lock it out.
func (a *Auth) Failed(addr, token string) error {
	wait := max(a.guesses.Fail("addr:"+addr), a.guesses.Fail("prefix:"+throttle.Prefix(token)))
	if wait > 0 {
		return rateLimited(wait)
	}
	return nil
}

func rateLimited(wait time.Duration) error {
	s := throttle.Seconds(wait)
	return &domain.Error{Code: domain.ERateLimited, RetryAfter: s,
		Message: fmt.Sprintf("too many failed sign-ins or wrong tokens; try again in %d s", s)}
}

// inProject reports whether p may act in project.
func (p Principal) inProject(project string) bool {
	switch {
	case p.Open:
		return true
	case p.Agent != nil:
		return p.Agent.Project == project
	case p.Operator != nil:
		return slices.Contains(p.Operator.Projects, "*") || slices.Contains(p.Operator.Projects, project)
	}
	return false
}

// owns reports whether p may see and withdraw question q: operators see
// their projects' questions, agents only their own.
func (p Principal) owns(q *domain.Question) bool {
	if !p.inProject(q.ProjectID) {
		return false
	}
	return p.Agent == nil || p.Agent.ID == q.AgentID
}

// respondent is the person an answer or vote from p is recorded as (the
// trust model: a credential acts only as itself). named is the request's
// responded_by, if any:
//   - the local user of a bridge without tokens may name anyone;
//   - an operator answers as itself; naming someone else is refused unless
//     the operator is a relay (operators[].act_for), and then the named
//     person is recorded with the operator in Via.
func respondent(p Principal, named *domain.PersonRef) (domain.Person, error) {
	switch {
	case p.Open:
		if named != nil {
			return named.Person, nil
		}
		return domain.Person{Platform: "api", ID: "local"}, nil
	case p.Operator != nil:
		self := domain.Person{Platform: "api", ID: p.Operator.ID, Name: p.Operator.ID}
		if named == nil || named.Key() == self.Key() {
			return self, nil
		}
		if !p.Operator.ActFor {
			return domain.Person{}, &domain.Error{Code: domain.ENotAllowed,
				Message: fmt.Sprintf("operator %s answers as itself: only a relay operator (operators[].act_for: true) may answer for another person", p.Operator.ID),
				Details: []domain.Detail{{Field: "responded_by", Problem: "leave it out, or configure this operator with act_for: true"}}}
		}
		who := named.Person
		who.Via = p.Operator.ID
		return who, nil
	}
	return domain.Person{}, domain.Errorf(domain.EForbidden, "agent tokens may not answer questions; use an operator token")
}
