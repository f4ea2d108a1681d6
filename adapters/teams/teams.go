// Package teams is askbridge's Microsoft Teams adapter: a Bot Framework
// bot that posts questions as Adaptive Cards through the Bot Connector,
// takes Universal Actions (adaptiveCard/action invokes) on
// POST /teams/messages, and updates every copy to its final state.
package teams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/httpx"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// DefaultServiceURL is where the bot reaches a conversation it has not
// heard from yet: Teams' global Bot Connector for proactive messages.
const DefaultServiceURL = "https://smba.trafficmanager.net/teams/"

// Keys of domain.Target.Refs owned by this adapter.
const (
	refService      = "service_url"  // the conversation's Bot Connector
	refConversation = "conversation" // where the card is: the chat, or the channel thread (…;messageid=<root>)
	refThread       = "thread_id"    // the thread's root message id (a channel post starts one)
)

// Config configures the adapter (docs/teams.md: TEAMS_* variables).
type Config struct {
	AppID     string // TEAMS_APP_ID: the bot's Microsoft app id, required
	AppSecret string // TEAMS_APP_SECRET: its client secret, required
	// TenantID is the Entra tenant of a single-tenant bot (TEAMS_TENANT_ID):
	// its token endpoint, and the tenant of channels the bot posts to
	// before it heard from them.
	TenantID string
	// PublicURL is the bridge's public address: cards link to a question's
	// page there when it does not fit.
	PublicURL string
	// OpenIDMetadataURL is the Bot Framework's OpenID metadata
	// (TEAMS_OPENID_METADATA_URL, default DefaultOpenIDMetadataURL).
	OpenIDMetadataURL string
	// TokenURL is the identity platform's token endpoint (TEAMS_TOKEN_URL,
	// default DefaultTokenURL(TenantID)).
	TokenURL string
	// ServiceURL is the Bot Connector of conversations not heard from yet
	// (TEAMS_SERVICE_URL, default DefaultServiceURL).
	ServiceURL string
	// ServiceURLAllow lists the hosts a serviceUrl may name
	// (TEAMS_SERVICE_URL_ALLOW, default DefaultServiceURLAllow).
	ServiceURLAllow []string

	// Transport carries requests (default httpx.Transport).
	Transport http.RoundTripper
	// MaxClockSkew is the leeway on a token's expiry (default 5 min).
	MaxClockSkew time.Duration
	// KeyRefreshMin is the least time between two fetches of the signing
	// keys for an unknown key id (default 1 min).
	KeyRefreshMin time.Duration
	// RetryAttempts, RetryBackoff and MaxRetryAfter bound retries of one
	// Connector call on 5xx, network errors and 429 (defaults 4, 250 ms, 30 s).
	RetryAttempts int
	RetryBackoff  time.Duration
	MaxRetryAfter time.Duration
	// Now is the wall clock tokens are checked against (default time.Now).
	Now func() time.Time
}

// Adapter is the Teams lifecycle.Channel plus its messaging endpoint.
type Adapter struct {
	cfg    Config
	router lifecycle.Chat
	log    *slog.Logger
	conn   *connector
	auth   *verifier
}

var _ lifecycle.Channel = (*Adapter)(nil)

// New builds the adapter. Errors name the missing or malformed setting and
// never contain a secret.
func New(cfg Config, router lifecycle.Chat, log *slog.Logger) (*Adapter, error) {
	if strings.TrimSpace(cfg.AppID) == "" {
		return nil, errors.New("teams: TEAMS_APP_ID is required: the bot's Microsoft app id from its Azure Bot resource")
	}
	if strings.TrimSpace(cfg.AppSecret) == "" {
		return nil, errors.New("teams: TEAMS_APP_SECRET is required: a client secret of the bot's app registration")
	}
	if router == nil {
		return nil, errors.New("teams: a router is required")
	}
	if cfg.OpenIDMetadataURL == "" {
		cfg.OpenIDMetadataURL = DefaultOpenIDMetadataURL
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = DefaultTokenURL(cfg.TenantID)
	}
	if cfg.ServiceURL == "" {
		cfg.ServiceURL = DefaultServiceURL
	}
	for name, v := range map[string]string{"TEAMS_OPENID_METADATA_URL": cfg.OpenIDMetadataURL,
		"TEAMS_TOKEN_URL": cfg.TokenURL, "TEAMS_SERVICE_URL": cfg.ServiceURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("teams: %s must be an absolute http(s) URL without a user name or password", name)
		}
	}
	if cfg.ServiceURLAllow == nil {
		cfg.ServiceURLAllow = DefaultServiceURLAllow
	}
	if cfg.Transport == nil {
		cfg.Transport = httpx.Transport()
	}
	if cfg.MaxClockSkew <= 0 {
		cfg.MaxClockSkew = 5 * time.Minute
	}
	if cfg.KeyRefreshMin <= 0 {
		cfg.KeyRefreshMin = time.Minute
	}
	if cfg.RetryAttempts <= 0 {
		cfg.RetryAttempts = 4
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 250 * time.Millisecond
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: cfg.Transport}
	a := &Adapter{cfg: cfg, router: router, log: log.With("adapter", Platform)}
	a.conn = &connector{client: client, allow: hostAllow(cfg.ServiceURLAllow),
		tokens: &tokenSource{url: cfg.TokenURL, appID: cfg.AppID, secret: cfg.AppSecret, client: client, now: cfg.Now},
		retry:  retryPolicy{Attempts: cfg.RetryAttempts, BaseBackoff: cfg.RetryBackoff, MaxWait: cfg.MaxRetryAfter},
		onRetry: func(op string, err error) {
			a.log.Info("retrying a Bot Connector call", "op", op, "err", err)
		}}
	a.auth = &verifier{metadataURL: cfg.OpenIDMetadataURL, appID: cfg.AppID, issuer: BotFrameworkIssuer,
		skew: cfg.MaxClockSkew, minRefresh: cfg.KeyRefreshMin, client: client, now: cfg.Now}
	return a, nil
}

// Platform implements lifecycle.Channel.
func (a *Adapter) Platform() string { return Platform }

// Register adds POST /teams/messages to mux.
func (a *Adapter) Register(mux *http.ServeMux) {
	mux.Handle("POST /teams/messages", a.MessagesHandler())
}

// card renders q for everyone.
func (a *Adapter) card(q *domain.Question) (*activity, error) {
	c, err := QuestionCard(q, CardView{PublicURL: a.cfg.PublicURL})
	if err != nil {
		return nil, lifecycle.Permanent(fmt.Errorf("teams: rendering the card: %w", err))
	}
	return cardActivity(c, domain.Shorten(q.Questions[0].Question, 100)), nil
}

// Post implements lifecycle.Channel: a channel gets a new thread (or the
// run's thread when the route keeps runs in threads, or the target's
// thread), a chat a message.
func (a *Adapter) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	act, err := a.card(q)
	if err != nil {
		return t, err
	}
	return a.post(ctx, q, act, t)
}

// post posts act on t, as the copy of q (its run's thread when the route
// keeps runs in threads).
func (a *Adapter) post(ctx context.Context, q *domain.Question, act *activity, t domain.Target) (domain.Target, error) {
	ref, err := a.resolve(ctx, t.Channel)
	if err != nil {
		return t, err
	}
	refs := map[string]string{refService: ref.ServiceURL}
	thread := t.ThreadTS
	if thread == "" && a.perRunThread(q) {
		thread = a.runThread(ctx, q, ref.ID)
	}
	var id, conv string
	switch {
	case thread != "" || !isChannel(ref.ID):
		conv = ref.ID
		if thread != "" {
			conv += ";messageid=" + thread
			refs[refThread] = thread
		}
		var res resourceResponse
		err = a.conn.call(ctx, "posting the question to "+ref.ID, http.MethodPost, ref.ServiceURL,
			"/v3/conversations/"+url.PathEscape(conv)+"/activities", act, &res)
		id = res.ID
	default:
		tenant := ref.Tenant
		if tenant == "" {
			tenant = a.cfg.TenantID
		}
		params := conversationParams{IsGroup: true, TenantID: tenant, Activity: act, ChannelData: map[string]any{
			"channel": map[string]string{"id": ref.ID}, "tenant": map[string]string{"id": tenant}}}
		var res conversationResource
		err = a.conn.call(ctx, "starting a thread in "+ref.ID, http.MethodPost, ref.ServiceURL, "/v3/conversations", params, &res)
		id, conv = res.ActivityID, res.ID
		if conv == "" {
			conv = ref.ID + ";messageid=" + id
		}
		refs[refThread] = id
	}
	if err != nil {
		return t, err
	}
	if id == "" {
		return t, errors.New("teams: the Bot Connector answered a post without an activity id")
	}
	refs[refConversation] = conv
	t.MessageTS, t.Refs, t.Error = id, refs, ""
	t.URL = "https://teams.microsoft.com/l/message/" + url.PathEscape(ref.ID) + "/" + url.PathEscape(id)
	return t, nil
}

// perRunThread reports whether q's route keeps a run's questions in one thread.
func (a *Adapter) perRunThread(q *domain.Question) bool {
	if q.Route == "" {
		return false
	}
	rt, ok := a.router.Route(q.Route)
	return ok && rt.Thread == "per-run"
}

// runThread finds the thread an earlier question of q's run started in
// the channel.
func (a *Adapter) runThread(ctx context.Context, q *domain.Question, channel string) string {
	qs, err := a.router.RunQuestions(ctx, q.ProjectID, q.RunID)
	if err != nil {
		a.log.Warn("reading the run's questions failed; starting a new thread", "question", q.ID, "err", err)
		return ""
	}
	thread := ""
	for _, other := range qs {
		if other.ID == q.ID {
			continue
		}
		for _, t := range other.Targets {
			if t.Platform == Platform && baseConversation(t.Refs[refConversation]) == channel && t.Refs[refThread] != "" {
				thread = t.Refs[refThread] // the latest wins
			}
		}
	}
	return thread
}

// Update implements lifecycle.Channel: the copy is shown again for
// everyone (votes, responders added).
func (a *Adapter) Update(ctx context.Context, q *domain.Question, t domain.Target) error {
	return a.replace(ctx, q, t)
}

// Finish implements lifecycle.Channel: the copy shows the outcome, its
// actions gone, for everyone.
func (a *Adapter) Finish(ctx context.Context, q *domain.Question, t domain.Target) error {
	return a.replace(ctx, q, t)
}

// replace updates a posted copy in place.
func (a *Adapter) replace(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	act, err := a.card(q)
	if err != nil {
		return err
	}
	return a.put(ctx, act, t)
}

// put replaces the posted copy t with act.
func (a *Adapter) put(ctx context.Context, act *activity, t domain.Target) error {
	service, conv := a.place(ctx, t)
	act.ID = t.MessageTS
	return a.conn.call(ctx, "updating the copy in "+baseConversation(conv), http.MethodPut, service,
		"/v3/conversations/"+url.PathEscape(conv)+"/activities/"+url.PathEscape(t.MessageTS), act, nil)
}

// place is where a posted copy lives: its service and conversation.
func (a *Adapter) place(ctx context.Context, t domain.Target) (service, conv string) {
	service, conv = t.Refs[refService], t.Refs[refConversation]
	if conv == "" {
		conv = t.Channel
	}
	if service == "" {
		if r, ok := a.lookup(ctx, conv); ok {
			service = r.ServiceURL
		} else {
			service = a.cfg.ServiceURL
		}
	}
	return service, conv
}

// Remind implements lifecycle.Channel: a reply in the copy's thread (the
// chat, for a chat) naming who may answer.
func (a *Adapter) Remind(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	service, conv := a.place(ctx, t)
	text := "Reminder: still waiting for an answer to “" + domain.Shorten(q.Questions[0].Question, 200) + "”"
	if who := domain.DescribeResponders(q.Responders); who != "" {
		text += " from " + who
	}
	text += "; " + domain.ExpiresPhrase(q, a.router.Clock().Now()) + "."
	msg := &activity{Type: "message", Text: text, TextFormat: "plain", ReplyToID: t.MessageTS}
	var res resourceResponse
	return a.conn.call(ctx, "reminding in "+baseConversation(conv), http.MethodPost, service,
		"/v3/conversations/"+url.PathEscape(conv)+"/activities/"+url.PathEscape(t.MessageTS), msg, &res)
}

// Start implements the bridge's adapter lifecycle: Teams sends activities
// to /teams/messages, so there is nothing to run.
func (a *Adapter) Start(ctx context.Context) error { return nil }

// Close implements the bridge's adapter lifecycle: invokes are answered
// within their request, so nothing runs in the background.
func (a *Adapter) Close(ctx context.Context) error { return nil }
