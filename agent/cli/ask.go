package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
)

const askUsage = `usage: askbridge ask [flags] [QUESTION]

Asks a question through the bridge and waits for the answer. The answer (the
chosen option's value, or the free text) is printed on stdout.

exit codes: 0 answered, 3 expired, 4 cancelled (dismissed, superseded, or
ask interrupted: the question is then withdrawn), 1 error, 2 usage.

  askbridge ask -q "Deploy to production?" -o Yes -o "No|Keep staging only"
  askbridge ask --multi -q "Which checks?" -o lint -o test -o e2e --json
  askbridge ask --route oncall --approvals 2 --default Deny --requested-by slack:U0123 \
    -q "Deploy api v2 to production?" -o Approve -o Deny`

func (a *app) ask(ctx context.Context, args []string) int {
	fs := newFlags("ask", a.stderr, askUsage)
	question := fs.String("q", "", "the question text (or the first argument)")
	fs.StringVar(question, "question", "", "the question text")
	var options stringsFlag
	fs.Var(&options, "o", `an option "label" or "label|description"; repeat 2-4 times, none for free text`)
	fs.Var(&options, "option", "same as -o")
	header := fs.String("header", "", "short header shown as a chip (at most 12 characters)")
	multi := fs.Bool("multi", false, "let the person choose several options")
	timeout := fs.String("timeout", "", `how long the question stays open, e.g. "30m" (default: the route's, else 5m)`)
	route := fs.String("route", "", "route name from the bridge configuration (default BRIDGE_ROUTE)")
	var targets stringsFlag
	fs.Var(&targets, "target", `post to "slack:CHANNEL[:THREAD_TS]" or "discord:CHANNEL"; repeatable`)
	run := fs.String("run", "", "run id this question belongs to (default BRIDGE_RUN_ID, else a new run)")
	agent := fs.String("agent", "", "agent id (default BRIDGE_AGENT_ID; else \"cli\", or with BRIDGE_TOKEN the token's agent)")
	contextText := fs.String("context", "", "markdown shown above the question")
	asJSON := fs.Bool("json", false, "print the final record as JSON")
	approvals := fs.Int("approvals", 0, "how many different people must choose the same option (approvals_required; default: the route's)")
	onTimeout := fs.String("default", "", "the option chosen if nobody answers in time (on_timeout); the answer is then flagged defaulted. On an approval or a gate (--approvals 2 or more) only an option that denies: an approving default comes only from a route")
	requestedBy := fs.String("requested-by", "", `who the question is asked for, "platform:id" (e.g. slack:U0123); a route with exclude_requester refuses their answer`)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *question == "" && fs.NArg() > 0 {
		*question = strings.Join(fs.Args(), " ")
	} else if fs.NArg() > 0 {
		fmt.Fprintf(a.stderr, "askbridge ask: unexpected argument %q (the question is already given with -q)\n", fs.Arg(0))
		return ExitUsage
	}
	if strings.TrimSpace(*question) == "" {
		fmt.Fprintln(a.stderr, "askbridge ask: a question is required (-q or the first argument)")
		return ExitUsage
	}
	req := &domain.AskRequest{
		RunID: firstNonEmpty(*run, a.env.RunID), AgentID: a.askAgentID(*agent),
		Route: firstNonEmpty(*route, a.env.Route), Context: *contextText,
		Questions: []domain.Item{{Question: *question, Header: *header, MultiSelect: *multi}},
	}
	for _, o := range options {
		label, desc, _ := strings.Cut(o, "|")
		req.Questions[0].Options = append(req.Questions[0].Options, domain.Option{Label: label, Description: desc})
	}
	for _, t := range targets {
		tg, err := parseTarget(t)
		if err != nil {
			fmt.Fprintf(a.stderr, "askbridge ask: --target %q: %v\n", t, err)
			return ExitUsage
		}
		req.Targets = append(req.Targets, tg)
	}
	if isSet(fs, "approvals") {
		if *approvals < 1 {
			fmt.Fprintln(a.stderr, "askbridge ask: --approvals: must be 1 or more")
			return ExitUsage
		}
		n := *approvals
		req.ApprovalsRequired = &n
	}
	if *onTimeout != "" {
		req.OnTimeout = &domain.OnTimeout{Answer: *onTimeout}
	}
	if *requestedBy != "" {
		if p, id, ok := strings.Cut(*requestedBy, ":"); !ok || p == "" || id == "" {
			fmt.Fprintf(a.stderr, "askbridge ask: --requested-by %q: want \"platform:id\", e.g. slack:U0123\n", *requestedBy)
			return ExitUsage
		}
		req.RequestedBy = *requestedBy
	}
	if *timeout != "" {
		d, err := domain.ParseDuration(*timeout)
		if err != nil {
			fmt.Fprintf(a.stderr, "askbridge ask: --timeout: %v\n", err)
			return ExitUsage
		}
		cd := domain.Duration(d)
		req.Timeout = &cd
	}

	c := a.env.Client(client.WithOutageNotice(a.outage))
	// The create is not cut by an interrupt: a question the bridge created
	// must come back to be withdrawn.
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	asked, err := c.Ask(actx, req)
	acancel()
	if err != nil {
		return a.apiFailure("ask", err)
	}
	fmt.Fprintln(a.stderr, asked.Message)
	q := &asked.Question
	if !q.Status.Final() {
		q, err = a.waitShowing(ctx, c.Wait, q)
		if ctx.Err() != nil {
			// Interrupted: nobody waits for this answer any more (docs/agents.md "Webhook mode").
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if cq, cerr := c.Cancel(cctx, asked.ID, domain.CancelAgent); cerr == nil {
				q = cq
			} else if final, gerr := c.Get(cctx, asked.ID); gerr == nil && final.Status.Final() {
				q = final // answered or expired in the meantime
			} else {
				fmt.Fprintf(a.stderr, "askbridge ask: interrupted; withdrawing question %s failed: %v\n", asked.ID, cerr)
				return ExitCancelled
			}
			if q.Status == domain.StatusCancelled {
				fmt.Fprintf(a.stderr, "askbridge ask: interrupted; question %s withdrawn\n", asked.ID)
			}
		} else if err != nil {
			return a.apiFailure("ask", err)
		}
	}
	return a.finish(q, *asJSON)
}

// finish prints the outcome of a final question and returns its exit code.
func (a *app) finish(q *domain.Question, asJSON bool) int {
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(q)
	}
	switch q.Status {
	case domain.StatusAnswered:
		if !asJSON {
			fmt.Fprintln(a.stdout, answerText(q))
		}
		return ExitOK
	case domain.StatusExpired:
		fmt.Fprintf(a.stderr, "askbridge ask: no answer: question %s expired at %s\n", q.ID, q.ExpiresAt.Format(time.RFC3339))
		return ExitExpired
	case domain.StatusCancelled:
		who := ""
		if q.RespondedBy != nil {
			who = " by " + q.RespondedBy.String()
		}
		fmt.Fprintf(a.stderr, "askbridge ask: no answer: question %s was cancelled%s (%s)\n", q.ID, who, q.CancelReason)
		return ExitCancelled
	}
	fmt.Fprintf(a.stderr, "askbridge ask: question %s is still %s\n", q.ID, q.Status)
	return ExitError
}

// answerText is what ask prints for an answered question: the response for
// one item, else one "question: answer" line per item.
func answerText(q *domain.Question) string {
	if len(q.Questions) == 1 {
		return q.Response
	}
	var lines []string
	for _, it := range q.Questions {
		lines = append(lines, it.Question+": "+q.Answers[it.Question])
	}
	return strings.Join(lines, "\n")
}

// waitShowing waits for the question; on a terminal it keeps one status
// line on stderr with the elapsed and remaining time.
func (a *app) waitShowing(ctx context.Context, wait func(context.Context, string) (*domain.Question, error), q *domain.Question) (*domain.Question, error) {
	if !a.isTTY(a.stderr) {
		return wait(ctx, q.ID)
	}
	type result struct {
		q   *domain.Question
		err error
	}
	done := make(chan result, 1)
	go func() {
		fq, err := wait(ctx, q.ID)
		done <- result{fq, err}
	}()
	start := a.now()
	where := q.Places()
	t := time.NewTicker(a.tick)
	defer t.Stop()
	for {
		fmt.Fprintf(a.rawErr, "\r\033[Kwaiting for an answer in %s — %s elapsed, expires in %s",
			domain.Visible(where), clock(a.now().Sub(start)), clock(q.ExpiresAt.Sub(a.now())))
		select {
		case r := <-done:
			fmt.Fprint(a.rawErr, "\r\033[K")
			if r.q == nil {
				r.q = q
			}
			return r.q, r.err
		case <-t.C:
		}
	}
}

// outage tells the person waiting that the bridge stopped answering (it
// is restarting, or gone) and how long ask keeps trying.
func (a *app) outage(_ error, limit time.Duration) {
	if a.isTTY(a.stderr) {
		fmt.Fprint(a.rawErr, "\r\033[K") // the waiting line
	}
	fmt.Fprintf(a.stderr, "askbridge ask: the bridge at %s stopped answering (restarting?); still waiting, for up to %s until it is back\n",
		a.env.URL, domain.HumanDuration(limit))
}

// clock renders d as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func parseTarget(s string) (domain.Target, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return domain.Target{}, errors.New(`want "slack:CHANNEL[:THREAD_TS]" or "discord:CHANNEL"`)
	}
	t := domain.Target{Platform: strings.ToLower(parts[0]), Channel: parts[1]}
	if len(parts) == 3 {
		t.ThreadTS = parts[2]
	}
	return t, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// isSet reports whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// askAgentID is the agent_id ask sends: --agent, else BRIDGE_AGENT_ID, else
// "cli" on a bridge without tokens. With a token it sends none, and the
// bridge uses the token's agent (an agent token refuses any other id).
func (a *app) askAgentID(flagValue string) string {
	if a.env.Token != "" {
		return firstNonEmpty(flagValue, a.env.AgentID)
	}
	return firstNonEmpty(flagValue, a.env.AgentID, "cli")
}
