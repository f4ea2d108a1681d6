// Package discord is askbridge's Discord adapter: it posts questions as
// messages with classic components (buttons, string selects, modals),
// takes clicks over the HTTP interactions endpoint or the gateway, and
// edits every copy to its final state.
package discord

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/internal/ackpool"
	"github.com/askbridge/askbridge/adapters/internal/httpx"
	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

// DefaultAPIURL is Discord's API base (DISCORD_API_URL).
const DefaultAPIURL = "https://discord.com/api/v10"

// Keys of domain.Target.Refs owned by this adapter.
const (
	refChannel      = "channel_id"    // where the message is: the channel or its thread
	refThread       = "thread_id"     // the run's thread (route thread: per-run)
	refGuild        = "guild_id"      // for jump links
	refAppID        = "app_id"        // interaction application id
	refToken        = "token"         // last interaction token on the copy
	refTokenExpires = "token_expires" // RFC 3339; the token works 15 minutes
)

// tokenLifetime is how long Discord accepts an interaction token for
// edits and follow-ups.
const tokenLifetime = 15 * time.Minute

// Config configures the adapter (docs/discord.md: DISCORD_* variables).
type Config struct {
	BotToken      string // DISCORD_BOT_TOKEN, required
	ApplicationID string // DISCORD_APPLICATION_ID, required
	PublicKey     string // DISCORD_PUBLIC_KEY, hex Ed25519; enables POST /discord/interactions
	APIURL        string // DISCORD_API_URL, default DefaultAPIURL
	// PublicURL is the bridge's public address (public_url): an approval
	// whose action does not fit a message links to its page there
	// (<PublicURL>/questions/<id>). Empty: the copy names the CLI command
	// that shows it instead.
	PublicURL string

	// Transport carries requests to Discord (default httpx.Transport: like
	// http.DefaultTransport, with connections to Discord kept alive).
	Transport http.RoundTripper
	// MaxClockSkew refuses interactions signed longer ago (default 5 min).
	MaxClockSkew time.Duration
	// AckAfter is how long a click waits for its outcome to show it in the
	// response; later, it is acknowledged with a deferred update and the
	// message is edited afterwards (default 5 ms, well inside the acknowledgement
	// target). Clicks that open a modal wait up to ModalAckAfter.
	AckAfter time.Duration
	// ModalAckAfter is how long a click that opens a modal may take: a
	// modal cannot follow a deferred update (default 2 s; Discord allows 3 s).
	ModalAckAfter time.Duration
	// RetryAttempts, RetryBackoff and MaxRetryAfter bound retries of one
	// Discord call on 5xx, network errors and 429 (defaults 4, 250 ms, 30 s).
	RetryAttempts int
	RetryBackoff  time.Duration
	MaxRetryAfter time.Duration
}

// Adapter is the Discord lifecycle.Channel plus its interaction handlers.
type Adapter struct {
	cfg       Config
	router    lifecycle.Chat
	log       *slog.Logger
	s         *discordgo.Session
	pub       *publicKey // nil: no HTTP interactions endpoint
	retry     retryPolicy
	guilds    sync.Map      // channel id → guild id, for jump links
	updating  sync.Map      // message id → *copyUpdate: an interaction answering on that copy
	pool      *ackpool.Pool // handling of interactions, bounded and behind acknowledgements
	undecided atomic.Int64  // interactions handled inline whose initial response is not decided yet
	queued    atomic.Int64  // interactions acknowledged at once and not yet handled to the end
}

var (
	_ lifecycle.Channel         = (*Adapter)(nil)
	_ lifecycle.HolderMentioner = (*Adapter)(nil)
)

// New builds the adapter. Errors name the missing or malformed setting and
// never contain a secret.
func New(cfg Config, router lifecycle.Chat, log *slog.Logger) (*Adapter, error) {
	if strings.TrimSpace(cfg.BotToken) == "" {
		return nil, errors.New("discord: DISCORD_BOT_TOKEN is required")
	}
	if strings.TrimSpace(cfg.ApplicationID) == "" {
		return nil, errors.New("discord: DISCORD_APPLICATION_ID is required")
	}
	if router == nil {
		return nil, errors.New("discord: a router is required")
	}
	var pub *publicKey
	if cfg.PublicKey != "" {
		b, err := hex.DecodeString(strings.TrimSpace(cfg.PublicKey))
		if err == nil && len(b) == ed25519.PublicKeySize {
			pub, err = newPublicKey(b)
		}
		if err != nil || pub == nil {
			return nil, errors.New("discord: DISCORD_PUBLIC_KEY must be the application's public key: 64 hex characters")
		}
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	api, err := url.Parse(cfg.APIURL)
	if err != nil || (api.Scheme != "http" && api.Scheme != "https") || api.Host == "" {
		return nil, fmt.Errorf("discord: DISCORD_API_URL must be an absolute http(s) URL such as %s", DefaultAPIURL)
	}
	if cfg.Transport == nil {
		cfg.Transport = httpx.Transport()
	}
	if cfg.MaxClockSkew <= 0 {
		cfg.MaxClockSkew = 5 * time.Minute
	}
	if cfg.AckAfter <= 0 {
		cfg.AckAfter = 5 * time.Millisecond
	}
	if cfg.ModalAckAfter <= 0 {
		cfg.ModalAckAfter = 2 * time.Second
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
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	token := strings.TrimSpace(cfg.BotToken)
	if !strings.HasPrefix(token, "Bot ") {
		token = "Bot " + token
	}
	s, err := discordgo.New(token)
	if err != nil {
		return nil, errors.New("discord: creating the session failed")
	}
	s.Client = &http.Client{Timeout: 20 * time.Second, Transport: &rewriteTransport{
		from: discordgo.EndpointAPI, to: api, next: newLimitTransport(cfg.Transport)}}
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 0
	s.StateEnabled = false
	s.Identify.Intents = discordgo.IntentsNone // INTERACTION_CREATE needs no intent
	a := &Adapter{cfg: cfg, router: router, log: log.With("adapter", "discord"), s: s, pub: pub,
		retry: retryPolicy{Attempts: cfg.RetryAttempts, BaseBackoff: cfg.RetryBackoff, MaxWait: cfg.MaxRetryAfter}}
	a.pool = ackpool.New(maxWorkers)
	return a, nil
}

// Platform implements lifecycle.Channel.
func (a *Adapter) Platform() string { return "discord" }

func (a *Adapter) now() time.Time { return a.router.Clock().Now() }

// Register adds POST /discord/interactions to mux when a public key is
// configured (otherwise interactions come over the gateway, see Start).
func (a *Adapter) Register(mux *http.ServeMux) {
	if a.pub != nil {
		mux.Handle("POST /discord/interactions", a.InteractionsHandler())
	}
}

// Start runs the gateway connection for interactions until ctx ends when
// no public key is configured. With a public key it returns nil at once:
// Discord sends interactions to one place only.
func (a *Adapter) Start(ctx context.Context) error {
	if a.pub != nil {
		return nil
	}
	remove := a.s.AddHandler(func(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
		if ic.Interaction != nil {
			a.HandleGatewayInteraction(ic.Interaction)
		}
	})
	defer remove()
	if err := a.s.Open(); err != nil {
		return fmt.Errorf("discord: opening the gateway failed: %w", classify("gateway", err))
	}
	a.log.Info("discord gateway connected; interactions arrive over the gateway")
	<-ctx.Done()
	return a.s.Close()
}

// Close waits for tracked background work (deferred answers, follow-ups)
// to end, or for ctx, then stops it.
func (a *Adapter) Close(ctx context.Context) error { return a.pool.Close(ctx) }

// goTrack runs fn in tracked background work that stops on Close.
func (a *Adapter) goTrack(fn func(ctx context.Context)) { a.pool.Go(fn) }

// Post implements lifecycle.Channel: it posts a copy of q in t's channel, or in
// the run's thread when the route keeps runs in threads.
func (a *Adapter) Post(ctx context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	return a.postMessage(ctx, q, t, a.render(q), q.ID)
}

// postMessage posts m for q (its run's thread, its label) on t; key names
// the message in its nonce.
func (a *Adapter) postMessage(ctx context.Context, q *domain.Question, t domain.Target, m message, key string) (domain.Target, error) {
	channel := t.Channel
	refs := map[string]string{}
	perRun := a.perRunThread(q)
	if t.ThreadTS != "" {
		channel = t.ThreadTS // a thread is a channel on Discord
		refs[refThread] = t.ThreadTS
	} else if perRun {
		if th := a.runThread(ctx, q, t.Channel); th != "" {
			channel = th
			refs[refThread] = th
		}
	}
	var msg *discordgo.Message
	send := &discordgo.MessageSend{Embeds: m.Embeds, Components: m.Components, AllowedMentions: noMentions()}
	err := a.call(ctx, "posting the question to channel "+channel, func(opts ...discordgo.RequestOption) error {
		var err error
		msg, err = a.sendMessage(channel, send, nonce("post", key, channel), opts...)
		return err
	})
	if err != nil && refs[refThread] != "" && t.ThreadTS == "" && errCode(err) != 0 {
		// The run's thread is gone or locked: start a new one from the channel.
		a.log.Warn("posting in the run's thread failed, posting in the channel", "thread", refs[refThread], "err", err)
		delete(refs, refThread)
		channel = t.Channel
		err = a.call(ctx, "posting the question to channel "+channel, func(opts ...discordgo.RequestOption) error {
			var err error
			msg, err = a.sendMessage(channel, send, nonce("post", key, channel), opts...)
			return err
		})
	}
	if err != nil {
		return t, err
	}
	refs[refChannel] = channel
	if perRun && refs[refThread] == "" {
		name := domain.Shorten(q.AgentLabel()+" · "+q.RunID, maxThreadName)
		var th *discordgo.Channel
		err := a.call(ctx, "starting the run's thread", func(opts ...discordgo.RequestOption) error {
			var err error
			th, err = a.s.MessageThreadStartComplex(channel, msg.ID, &discordgo.ThreadStart{Name: name, AutoArchiveDuration: 1440}, opts...)
			return err
		})
		if err != nil {
			// The question is posted; the next one of the run tries again.
			a.log.Warn("starting the run's thread failed", "question", q.ID, "channel", channel, "err", err)
		} else {
			refs[refThread] = th.ID
		}
	}
	guild := msg.GuildID
	if guild == "" {
		guild = a.guildOf(ctx, channel)
	}
	if guild != "" {
		refs[refGuild] = guild
	} else {
		guild = "@me"
	}
	t.MessageTS = msg.ID
	t.URL = fmt.Sprintf("https://discord.com/channels/%s/%s/%s", guild, channel, msg.ID)
	t.Refs = refs
	t.Error = ""
	return t, nil
}

// sendMessage posts a message with a nonce that Discord enforces: a retry
// of the same send (after a 5xx, a reset, or a response lost on the way
// back; discordgo also retries 502s by itself) returns the message the
// first attempt created instead of posting it again, so no second copy
// with live buttons that nothing records is left behind.
func (a *Adapter) sendMessage(channel string, send *discordgo.MessageSend, nonce string, opts ...discordgo.RequestOption) (*discordgo.Message, error) {
	body := struct {
		*discordgo.MessageSend
		Nonce        string `json:"nonce"`
		EnforceNonce bool   `json:"enforce_nonce"`
	}{send, nonce, true}
	endpoint := discordgo.EndpointChannelMessages(channel)
	b, err := a.s.RequestWithBucketID("POST", endpoint, body, endpoint, opts...)
	if err != nil {
		return nil, err
	}
	var msg discordgo.Message
	if err := json.Unmarshal(b, &msg); err != nil {
		return nil, fmt.Errorf("reading Discord's answer to a message post: %w", err)
	}
	return &msg, nil
}

// maxNonce is Discord's limit on a message nonce.
const maxNonce = 25

// nonce names one message the adapter sends, the same on every replica and
// every retry: a hash of what it is for.
func nonce(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return hex.EncodeToString(h[:])[:maxNonce]
}

// perRunThread reports whether q's route keeps a run's questions in one thread.
func (a *Adapter) perRunThread(q *domain.Question) bool {
	if q.Route == "" {
		return false
	}
	rt, ok := a.router.Route(q.Route)
	return ok && rt.Thread == "per-run"
}

// runThread finds the thread an earlier question of q's run opened in channel.
func (a *Adapter) runThread(ctx context.Context, q *domain.Question, channel string) string {
	qs, err := a.router.RunQuestions(ctx, q.ProjectID, q.RunID)
	if err != nil {
		a.log.Warn("reading the run's questions failed; posting without its thread", "question", q.ID, "err", err)
		return ""
	}
	thread := ""
	for _, other := range qs {
		if other.ID == q.ID {
			continue
		}
		for _, t := range other.Targets {
			if t.Platform == "discord" && t.Channel == channel && t.Refs[refThread] != "" {
				thread = t.Refs[refThread] // the latest wins
			}
		}
	}
	return thread
}

// guildOf returns the guild of a channel (message responses omit it), cached.
func (a *Adapter) guildOf(ctx context.Context, channel string) string {
	if g, ok := a.guilds.Load(channel); ok {
		return g.(string)
	}
	var ch *discordgo.Channel
	err := a.call(ctx, "reading channel "+channel, func(opts ...discordgo.RequestOption) error {
		var err error
		ch, err = a.s.Channel(channel, opts...)
		return err
	})
	if err != nil || ch == nil {
		return ""
	}
	a.guilds.Store(channel, ch.GuildID)
	return ch.GuildID
}

// Finish implements lifecycle.Channel: the copy shows the outcome line and its
// controls disabled. It edits through the last interaction token on the
// copy while that is valid, else with the bot token.
func (a *Adapter) Finish(ctx context.Context, q *domain.Question, t domain.Target) error {
	if t.MessageTS == "" {
		return nil
	}
	if v, ok := a.updating.Load(t.MessageTS); ok {
		// The click that ended the question is answered with the final
		// state of this copy; editing it again would only cost a request.
		u := v.(*copyUpdate)
		select {
		case <-u.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if u.final {
			a.updating.CompareAndDelete(t.MessageTS, u)
			return nil
		}
	}
	return a.edit(ctx, q, t, a.render(q))
}

// edit shows m on a posted copy: through the last interaction token on the
// copy while that is valid, else with the bot token.
func (a *Adapter) edit(ctx context.Context, q *domain.Question, t domain.Target, m message) error {
	if tok, app, ok := a.validToken(t); ok {
		err := a.call(ctx, "editing the copy with its interaction token", func(opts ...discordgo.RequestOption) error {
			_, err := a.s.WebhookMessageEdit(app, tok, "@original", &discordgo.WebhookEdit{
				Content: &m.Content, Embeds: &m.Embeds, Components: &m.Components, AllowedMentions: noMentions(),
			}, opts...)
			return err
		})
		if err == nil {
			return nil
		}
		a.log.Info("editing with the interaction token failed, using the bot token", "question", q.ID, "err", err)
	}
	channel := t.Refs[refChannel]
	if channel == "" {
		channel = t.Channel
	}
	err := a.call(ctx, "editing the copy in channel "+channel, func(opts ...discordgo.RequestOption) error {
		_, err := a.s.ChannelMessageEditComplex(&discordgo.MessageEdit{
			ID: t.MessageTS, Channel: channel,
			Content: &m.Content, Embeds: &m.Embeds, Components: &m.Components, AllowedMentions: noMentions(),
		}, opts...)
		return err
	})
	// A deleted copy (Unknown Message) is a permanent error (permanent.go),
	// as on Slack: the router logs it once and does not retry.
	return err
}

// validToken returns the copy's interaction token while Discord still
// accepts it, with a minute to spare.
func (a *Adapter) validToken(t domain.Target) (token, app string, ok bool) {
	token, app = t.Refs[refToken], t.Refs[refAppID]
	if token == "" || app == "" {
		return "", "", false
	}
	exp, err := time.Parse(time.RFC3339Nano, t.Refs[refTokenExpires])
	if err != nil || exp.Sub(a.now()) < time.Minute {
		return "", "", false
	}
	return token, app, true
}

// rememberToken stores the interaction's token on the copy it was clicked
// on, so any replica can edit that copy through it for 15 minutes.
func (a *Adapter) rememberToken(ctx context.Context, q *domain.Question, i *discordgo.Interaction) {
	if i.Message == nil || i.Token == "" {
		return
	}
	for _, t := range q.Targets {
		if t.Platform != "discord" || t.MessageTS != i.Message.ID {
			continue
		}
		refs := maps.Clone(t.Refs)
		if refs == nil {
			refs = map[string]string{}
		}
		refs[refAppID] = i.AppID
		if refs[refAppID] == "" {
			refs[refAppID] = a.cfg.ApplicationID
		}
		refs[refToken] = i.Token
		refs[refTokenExpires] = a.now().Add(tokenLifetime).UTC().Format(time.RFC3339Nano)
		t.Refs = refs
		if err := a.router.AttachCopy(ctx, q.ProjectID, q.ID, t); err != nil {
			a.log.Warn("recording the interaction token on the copy failed", "question", q.ID, "err", err)
		}
		return
	}
}
