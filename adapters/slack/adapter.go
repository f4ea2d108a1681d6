// Package slack is askbridge's Slack adapter: it posts questions as Block Kit
// messages, takes answers from button clicks, modals and thread replies (over
// HTTP or Socket Mode), and updates every copy when a question ends.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/internal/ackpool"
	"github.com/askbridge/askbridge/adapters/internal/httpx"
	"github.com/askbridge/askbridge/domain"
	"github.com/slack-go/slack"
)

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// Config configures the adapter (docs/slack.md).
type Config struct {
	BotToken      string // SLACK_BOT_TOKEN, xoxb-…
	SigningSecret string // SLACK_SIGNING_SECRET; required unless AppToken is set
	AppToken      string // SLACK_APP_TOKEN, xapp-…; Socket Mode instead of HTTP endpoints
	APIURL        string // SLACK_API_URL, default DefaultAPIURL
	// UserGroupTTL is how long user group members are cached (default 5 min).
	UserGroupTTL time.Duration
	// HTTPClient calls the Web API (default: a client with a 15 s timeout
	// that keeps connections to Slack alive, httpx.Transport).
	HTTPClient *http.Client
	// PublicURL is where people reach the bridge's web inbox (public_url):
	// an approval whose action does not fit a message links to its
	// question page there. Empty: a "Show full action" button instead.
	PublicURL string
	// Now is the clock of signature checks (default time.Now).
	Now func() time.Time
}

// Adapter is the Slack lifecycle.Channel with its interaction endpoints.
type Adapter struct {
	cfg    Config
	router lifecycle.Chat
	log    *slog.Logger
	api    *slack.Client
	retry  *retrier
	groups *groupCache

	pool *ackpool.Pool // answer work, bounded and behind acknowledgements
}

var (
	_ lifecycle.Channel         = (*Adapter)(nil)
	_ lifecycle.HolderMentioner = (*Adapter)(nil)
)

// New checks cfg and builds the adapter. Errors name the missing or malformed
// setting and never contain a secret.
func New(cfg Config, router lifecycle.Chat, log *slog.Logger) (*Adapter, error) {
	var problems []string
	switch {
	case cfg.BotToken == "":
		problems = append(problems, "SLACK_BOT_TOKEN is required")
	case !strings.HasPrefix(cfg.BotToken, "xoxb-"):
		problems = append(problems, "SLACK_BOT_TOKEN must be a bot token (xoxb-…)")
	}
	if cfg.AppToken != "" && !strings.HasPrefix(cfg.AppToken, "xapp-") {
		problems = append(problems, "SLACK_APP_TOKEN must be an app-level token (xapp-…) with connections:write")
	}
	if cfg.AppToken == "" && cfg.SigningSecret == "" {
		problems = append(problems, "SLACK_SIGNING_SECRET is required for POST /slack/interactions and /slack/events (or set SLACK_APP_TOKEN for Socket Mode)")
	}
	if router == nil {
		problems = append(problems, "a router is required")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("slack adapter: %s", strings.Join(problems, "; "))
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	if cfg.UserGroupTTL <= 0 {
		cfg.UserGroupTTL = 5 * time.Minute
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 15 * time.Second, Transport: httpx.Transport()}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{cfg: cfg, router: router, log: log.With("adapter", "slack"), retry: newRetrier()}
	opts := []slack.Option{slack.OptionAPIURL(cfg.APIURL), slack.OptionHTTPClient(cfg.HTTPClient)}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	a.api = slack.New(cfg.BotToken, opts...)
	a.groups = newGroupCache(cfg.UserGroupTTL, cfg.Now, a.fetchGroup)
	a.pool = ackpool.New(maxWorkers)
	return a, nil
}

// Platform implements lifecycle.Channel.
func (a *Adapter) Platform() string { return "slack" }

// SocketMode reports whether interactions arrive over Socket Mode.
func (a *Adapter) SocketMode() bool { return a.cfg.AppToken != "" }

// call runs one Web API call through the retrier and logs a final failure
// with Slack's error code.
func (a *Adapter) call(ctx context.Context, method, key string, o callOpts, fn func(context.Context) error) error {
	err := a.retry.do(ctx, method, key, o, fn)
	if err != nil && !errors.Is(err, context.Canceled) {
		a.log.Warn("slack call failed", "method", method, "key", key, "code", ErrorCode(err), "err", err)
	}
	return err
}

// Post implements lifecycle.Channel: it posts q on t (in the run's thread when
// its route says `thread: per-run`) and returns t with the message ts set.
func (a *Adapter) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	thread := t.ThreadTS
	if thread == "" {
		thread = a.runThread(ctx, q, t.Channel)
	}
	blocks, text := renderQuestionX(q, a.router.Clock().Now(), a.extras(q))
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl()}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := a.call(ctx, "chat.postMessage", t.Channel, callOpts{}, func(ctx context.Context) error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, t.Channel, opts...)
		return err
	})
	if err != nil {
		return t, err
	}
	t.MessageTS = ts
	if thread != "" && thread != t.ThreadTS {
		if t.Refs == nil {
			t.Refs = map[string]string{}
		}
		t.Refs["thread_ts"] = thread
	}
	return t, nil
}

// Finish implements lifecycle.Channel: it edits the copy to q's final state.
func (a *Adapter) Finish(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	blocks, text := renderFinalX(q, a.extras(q))
	return a.call(ctx, "chat.update", t.Channel, callOpts{}, func(ctx context.Context) error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, t.Channel, t.MessageTS,
			slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		return err
	})
}

// runThread returns the thread a question joins under `thread: per-run`:
// the one of the run's earliest copy on the same channel.
func (a *Adapter) runThread(ctx context.Context, q *domain.Question, channel string) string {
	if q.Route == "" || q.RunID == "" {
		return ""
	}
	rt, ok := a.router.Route(q.Route)
	if !ok || rt.Thread != "per-run" {
		return ""
	}
	qs, err := a.router.RunQuestions(ctx, q.ProjectID, q.RunID)
	if err != nil {
		a.log.Warn("finding the run's thread failed; posting a new message", "question", q.ID, "err", err)
		return ""
	}
	for _, prev := range qs {
		if prev.ID == q.ID {
			continue
		}
		for _, t := range prev.Targets {
			if t.Platform != "slack" || t.Channel != channel || t.MessageTS == "" || t.Error != "" {
				continue
			}
			switch {
			case t.Refs["thread_ts"] != "":
				return t.Refs["thread_ts"]
			case t.ThreadTS != "":
				return t.ThreadTS
			default:
				return t.MessageTS
			}
		}
	}
	return ""
}

// Register adds POST /slack/interactions and POST /slack/events to mux,
// unless the adapter runs in Socket Mode.
func (a *Adapter) Register(mux *http.ServeMux) {
	if a.SocketMode() {
		return
	}
	mux.Handle("POST /slack/interactions", http.HandlerFunc(a.serveInteraction))
	mux.Handle("POST /slack/events", http.HandlerFunc(a.serveEvent))
}

// Close waits for background work (answers, modals, messages to people) to
// end, or for ctx, whichever comes first; then it cancels what is left.
func (a *Adapter) Close(ctx context.Context) error { return a.pool.Close(ctx) }

// maxWorkers bounds how many answers are processed at once, so a burst of
// clicks cannot starve the acknowledgements (which must stay fast) and does
// not hammer Slack's per-workspace rate limits.
const maxWorkers = 16

// arrived notes that a request to acknowledge has come in: answer work
// gives way to acknowledgements (ackpool.Quiet).
func (a *Adapter) arrived() { a.pool.Arrived() }

// goBG runs fn as tracked background work with its own deadline, at most
// maxWorkers at a time (modals bypass the bound: their trigger dies in 3 s).
func (a *Adapter) goBG(timeout time.Duration, fn func(ctx context.Context)) {
	a.goTracked(timeout, true, fn)
}

func (a *Adapter) goTracked(timeout time.Duration, bounded bool, fn func(ctx context.Context)) {
	timed := func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		fn(ctx)
	}
	if bounded {
		a.pool.GoBounded(timed)
	} else {
		a.pool.Go(timed)
	}
}
