// Command agentloop is a runnable agent loop that embeds askbridge in
// webhook mode: it asks a question, pauses its run and stops; when someone
// answers (in Slack, Discord, the web inbox or with `askbridge questions
// answer`), the bridge POSTs the signed resume webhook and the loop
// continues the conversation as a new run with resumed_from set.
//
// The "model" is scripted so the example runs without an LLM: it asks which
// region to deploy to, then "deploys" there.
//
//	export BRIDGE_PROJECT=demo
//	BRIDGE_WEBHOOK_SECRET=s3cret askbridge serve &
//	BRIDGE_WEBHOOK_SECRET=s3cret go run ./examples/agentloop
//	askbridge questions list; askbridge questions answer <id> 2
//
// In production the webhook receiver is a long-running service and the run
// itself a job that exits when it pauses; here both live in one process.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/executor"
	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
	"github.com/google/uuid"
)

// Message is one turn of the conversation.
type Message struct {
	Role    string `json:"role"` // user, assistant, tool
	Content string `json:"content"`
}

// state is what a paused run saves to continue later.
type state struct {
	RunID    string    `json:"run_id"`
	Messages []Message `json:"messages"`
}

// Outcome of one run.
const (
	Paused   = "paused"
	Finished = "finished"
)

// Agent runs the loop.
type Agent struct {
	Client   *client.Client
	Asker    *executor.Asker
	StateDir string
	Out      io.Writer
	Log      *slog.Logger

	mu       sync.Mutex
	finished chan string // run ids of finished runs
}

// NewAgent builds an agent that receives resume webhooks at resumeURL.
func NewAgent(c *client.Client, resumeURL, stateDir string, out io.Writer, log *slog.Logger) *Agent {
	a := &Agent{Client: c, StateDir: stateDir, Out: out, Log: log, finished: make(chan string, 16)}
	a.Asker = &executor.Asker{Client: c, ResumeURL: resumeURL, AgentID: "example-agent", Gate: &executor.PauseGate{}}
	return a
}

// model is the scripted LLM: it asks until it has an answer, then acts.
func model(msgs []Message) (toolCall *domain.AskRequest, final string) {
	last := msgs[len(msgs)-1]
	if last.Role == "user" && strings.HasPrefix(last.Content, "Previously you asked") {
		region := "nowhere"
		if _, after, ok := strings.Cut(last.Content, "The user responded: "); ok {
			region = strings.Trim(strings.SplitN(after, "\n", 2)[0], `"`)
		} else {
			return nil, "No region was chosen; deploying nothing."
		}
		return nil, "Deploying to " + region + "."
	}
	return &domain.AskRequest{Questions: []domain.Item{{
		Question: "Which region should I deploy to?", Header: "Region",
		Options: []domain.Option{
			{Label: "eu-west-1", Description: "Dublin"},
			{Label: "us-east-1", Description: "N. Virginia"},
		},
	}}, Timeout: durationp(30 * time.Minute)}, ""
}

func durationp(d time.Duration) *domain.Duration { v := domain.Duration(d); return &v }

// Run runs the loop for runID from msgs until it finishes or pauses.
func (a *Agent) Run(ctx context.Context, runID string, msgs []Message) (string, error) {
	gate := a.Asker.Gate
	gate.Reset()
	for step := 0; step < 10; step++ {
		// The gate is checked before every model call.
		if q, paused := gate.Paused(); paused {
			if err := a.save(state{RunID: runID, Messages: msgs}); err != nil {
				return "", err
			}
			if _, err := a.Asker.Paused(ctx, runID); err != nil {
				return "", err
			}
			a.Log.Info("run paused", "run", runID, "question", q.ID)
			fmt.Fprintf(a.Out, "[%s] paused: waiting for an answer to question %s\n", runID, q.ID)
			return Paused, nil
		}
		call, final := model(msgs)
		if call == nil {
			fmt.Fprintf(a.Out, "[%s] %s\n", runID, final)
			a.finished <- runID
			return Finished, nil
		}
		asked, err := a.Asker.Ask(ctx, runID, call)
		if err != nil {
			return "", fmt.Errorf("ask_user: %w", err)
		}
		msgs = append(msgs, Message{Role: "tool", Content: asked.Message})
	}
	return "", errors.New("too many steps")
}

// HandleResume is the webhook receiver's handler: it loads the paused run
// and continues it as the new run, in the background (the bridge waits for
// the webhook's response at most 15 s).
func (a *Agent) HandleResume(ctx context.Context, r webhook.Resume) error {
	st, err := a.load(r.Run.ResumedFrom)
	if err != nil {
		return err
	}
	msgs := append(st.Messages, Message{Role: "user", Content: r.UserMessage})
	fmt.Fprintf(a.Out, "[%s] resumed from %s after %s\n", r.Run.ID, r.Run.ResumedFrom, r.Event)
	go func() {
		if _, err := a.Run(context.WithoutCancel(ctx), r.Run.ID, msgs); err != nil {
			a.Log.Error("continuation failed", "run", r.Run.ID, "err", err)
		}
	}()
	return nil
}

// Finished delivers the ids of runs that finished.
func (a *Agent) Finished() <-chan string { return a.finished }

func (a *Agent) path(runID string) string {
	return filepath.Join(a.StateDir, strings.ReplaceAll(runID, "/", "_")+".json")
}

func (a *Agent) save(s state) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, _ := json.Marshal(s)
	return os.WriteFile(a.path(s.RunID), b, 0o600)
}

func (a *Agent) load(runID string) (state, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s state
	b, err := os.ReadFile(a.path(runID))
	if err != nil {
		return s, fmt.Errorf("no saved state for run %s: %w", runID, err)
	}
	return s, json.Unmarshal(b, &s)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address of the resume webhook receiver")
	stateDir := fs.String("state", "", "directory for paused runs (default: a temporary one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	secret := getenv("BRIDGE_WEBHOOK_SECRET")
	if secret == "" {
		return errors.New("set BRIDGE_WEBHOOK_SECRET to the bridge's webhook secret")
	}
	bridgeURL := getenv("BRIDGE_URL")
	if bridgeURL == "" {
		bridgeURL = "http://127.0.0.1:8080"
	}
	if *stateDir == "" {
		d, err := os.MkdirTemp("", "agentloop-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*stateDir = d
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	project := getenv("BRIDGE_PROJECT")
	if project == "" {
		project = "default"
	}
	c := client.New(bridgeURL, getenv("BRIDGE_TOKEN"), project)
	agent := NewAgent(c, "http://"+ln.Addr().String()+"/resume", *stateDir, stdout, log)
	recv, err := webhook.NewReceiver([]byte(secret), agent.HandleResume)
	if err != nil {
		return err
	}
	recv.Logger = log
	mux := http.NewServeMux()
	mux.Handle("POST /resume", recv)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(stdout, "resume webhooks at http://%s/resume\n", ln.Addr())

	runID := "run-" + uuid.NewString()
	outcome, err := agent.Run(ctx, runID, []Message{{Role: "user", Content: "Deploy the service."}})
	if err != nil {
		return err
	}
	if outcome == Finished {
		return nil
	}
	// The project is named so the CLI of another terminal looks in the same one.
	fmt.Fprintf(stdout, "answer it with: BRIDGE_PROJECT=%s askbridge questions list; BRIDGE_PROJECT=%s askbridge questions answer <id> <n>\n", project, project)
	select {
	case id := <-agent.Finished():
		fmt.Fprintf(stdout, "run %s finished\n", id)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
