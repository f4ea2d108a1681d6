package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/core"
	"github.com/bwmarrin/discordgo"
	sjson "github.com/segmentio/encoding/json"
)

// maxInteractionBody bounds a signed interaction request.
const maxInteractionBody = 1 << 20

// Interaction types and component types read from requests.
const (
	typePing            = 1
	typeComponent       = 3
	typeModalSubmit     = 5
	componentTextInput  = 4
	responsePong        = 1
	responseMessage     = 4
	responseDeferUpdate = 6
	responseUpdate      = 7
	responseModal       = 9
)

// inbound is the part of an interaction the adapter reads. It is parsed
// here rather than by discordgo so that component types discordgo does not
// know (modal labels, Components V2 in the clicked message) never make a
// click unreadable.
type inbound struct {
	ID        string `json:"id"`
	AppID     string `json:"application_id"`
	Type      int    `json:"type"`
	Token     string `json:"token"`
	GuildID   string `json:"guild_id"`
	ChannelID string `json:"channel_id"`
	Data      struct {
		CustomID   string      `json:"custom_id"`
		Values     []string    `json:"values"`
		Components []component `json:"components"`
	} `json:"data"`
	Message *struct {
		ID string `json:"id"`
	} `json:"message"`
	Member *struct {
		User  *discordgo.User `json:"user"`
		Nick  string          `json:"nick"`
		Roles []string        `json:"roles"`
	} `json:"member"`
	User *discordgo.User `json:"user"`
}

// component is a modal component: an action row (components) or a label
// (component) around a text input.
type component struct {
	Type       int         `json:"type"`
	CustomID   string      `json:"custom_id"`
	Value      string      `json:"value"`
	Components []component `json:"components"`
	Component  *component  `json:"component"`
}

// text returns the value of the modal's text input.
func (in *inbound) text() string {
	var find func(cs []component) (string, bool)
	find = func(cs []component) (string, bool) {
		for _, c := range cs {
			if c.Type == componentTextInput && c.CustomID == textInputID {
				return c.Value, true
			}
			if v, ok := find(c.Components); ok {
				return v, true
			}
			if c.Component != nil {
				if v, ok := find([]component{*c.Component}); ok {
					return v, true
				}
			}
		}
		return "", false
	}
	v, _ := find(in.Data.Components)
	return strings.TrimSpace(v)
}

// person is who clicked: the member in a server (with role ids), the user
// in a DM.
func (in *inbound) person() core.Person {
	var u *discordgo.User
	var roles []string
	nick := ""
	if in.Member != nil && in.Member.User != nil {
		u, roles, nick = in.Member.User, in.Member.Roles, in.Member.Nick
	} else {
		u = in.User
	}
	if u == nil {
		return core.Person{Platform: "discord"}
	}
	name := nick
	if name == "" {
		name = u.GlobalName
	}
	if name == "" {
		name = u.Username
	}
	return core.Person{Platform: "discord", ID: u.ID, Name: name, Groups: roles}
}

// readSigned returns prefix followed by the request body, read into one
// buffer when the request announces its length.
func readSigned(w http.ResponseWriter, r *http.Request, prefix string) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxInteractionBody)
	if n := r.ContentLength; n >= 0 && n <= maxInteractionBody {
		msg := make([]byte, len(prefix)+int(n), len(prefix)+int(n)+1)
		copy(msg, prefix)
		if _, err := io.ReadFull(body, msg[len(prefix):]); err != nil {
			return nil, err
		}
		// Nothing may follow the announced length (net/http ends the
		// body there; a 1-byte read also meets MaxBytesReader's limit).
		if k, err := body.Read(msg[len(msg):cap(msg)]); k > 0 || (err != nil && err != io.EOF) {
			return nil, errors.New("body longer than announced")
		}
		return msg, nil
	}
	rest, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	return append([]byte(prefix), rest...), nil
}

// verify checks Discord's Ed25519 signature over timestamp+body (msg, the
// timestamp being its first tsLen bytes) and that the timestamp is
// recent. Nothing of the body is parsed before this.
func (a *Adapter) verify(h http.Header, msg []byte, tsLen int) bool {
	sig, err := hex.DecodeString(h.Get("X-Signature-Ed25519"))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return false
	}
	secs, err := strconv.ParseInt(string(msg[:tsLen]), 10, 64)
	if err != nil {
		return false
	}
	if d := a.now().Sub(time.Unix(secs, 0)); d > a.cfg.MaxClockSkew || d < -a.cfg.MaxClockSkew {
		return false
	}
	return a.pub.verify(msg, sig)
}

// InteractionsHandler serves POST /discord/interactions: signature checked
// first (401 otherwise), PING answered with PONG, every other interaction
// answered in the response body within its budget (see Config.AckAfter).
func (a *Adapter) InteractionsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer a.pool.Acking()()
		// The signed message is timestamp+body: read the body in after
		// the timestamp, into one buffer of the announced length.
		ts := r.Header.Get("X-Signature-Timestamp")
		msg, err := readSigned(w, r, ts)
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		body := msg[len(ts):]
		if a.pub == nil || !a.verify(r.Header, msg, len(ts)) {
			http.Error(w, "invalid request signature", http.StatusUnauthorized)
			return
		}
		var in inbound
		if err := decodeInbound(body, &in); err != nil {
			http.Error(w, "malformed interaction", http.StatusBadRequest)
			return
		}
		if in.Type == typePing {
			writeJSON(w, &discordgo.InteractionResponse{Type: responsePong})
			return
		}
		x := a.exchange(&in)
		writeErr := writeJSON(w, a.awaitFirst(x))
		if f, ok := w.(http.Flusher); ok && writeErr == nil {
			f.Flush()
		}
		x.markSent(writeErr == nil)
	})
}

// HandleGatewayInteraction handles an interaction received over the
// gateway with the same code as the HTTP endpoint; the response goes out
// through the interaction callback endpoint.
func (a *Adapter) HandleGatewayInteraction(i *discordgo.Interaction) {
	in := fromDiscordgo(i)
	if in.Type == typePing {
		return
	}
	x := a.exchange(in)
	a.goTrack(func(ctx context.Context) {
		resp := a.awaitFirst(x)
		err := a.call(ctx, "answering the interaction", func(opts ...discordgo.RequestOption) error {
			return a.s.InteractionRespond(&discordgo.Interaction{ID: in.ID, Token: in.Token}, resp, opts...)
		})
		switch {
		case errCode(err) == codeAlreadyAcked:
			a.log.Debug("interaction already acknowledged", "interaction", in.ID)
		case err != nil:
			a.log.Warn("answering an interaction failed", "interaction", in.ID, "err", err)
		}
		x.markSent(err == nil)
	})
}

func fromDiscordgo(i *discordgo.Interaction) *inbound {
	in := &inbound{ID: i.ID, AppID: i.AppID, Type: int(i.Type), Token: i.Token, GuildID: i.GuildID,
		ChannelID: i.ChannelID, User: i.User}
	if i.Member != nil {
		in.Member = &struct {
			User  *discordgo.User `json:"user"`
			Nick  string          `json:"nick"`
			Roles []string        `json:"roles"`
		}{User: i.Member.User, Nick: i.Member.Nick, Roles: i.Member.Roles}
	}
	if i.Message != nil {
		in.Message = &struct {
			ID string `json:"id"`
		}{ID: i.Message.ID}
	}
	switch d := i.Data.(type) {
	case discordgo.MessageComponentInteractionData:
		in.Data.CustomID, in.Data.Values = d.CustomID, d.Values
	case discordgo.ModalSubmitInteractionData:
		in.Data.CustomID = d.CustomID
		for _, c := range d.Components {
			if row, ok := c.(*discordgo.ActionsRow); ok {
				for _, cc := range row.Components {
					if ti, ok := cc.(*discordgo.TextInput); ok {
						in.Data.Components = append(in.Data.Components, component{Type: componentTextInput, CustomID: ti.CustomID, Value: ti.Value})
					}
				}
			}
		}
	}
	return in
}

// writeJSON writes v as the whole response with its Content-Length, so
// that headers and body leave in one write (not chunked, which takes a
// second write for the terminating chunk).
// decodeInbound parses a verified interaction. segmentio's decoder reads
// in one pass what encoding/json reads in two (validate, then decode): a
// quarter of the time, which counts in a burst of clicks (BENCHMARKS.md).
// FuzzInboundDecodersAgree checks it reads what encoding/json would.
func decodeInbound(body []byte, in *inbound) error { return sjson.Unmarshal(body, in) }

func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	_, err = w.Write(b)
	return err
}

// exchange is one interaction being answered. Discord takes exactly one
// initial response; whatever the handler decides after a deferred
// acknowledgement becomes an edit of the message or a follow-up.
type exchange struct {
	a     *Adapter
	in    *inbound
	first chan *discordgo.InteractionResponse // the initial response, buffered 1
	sent  chan struct{}                       // closed once the initial response is out

	mu         sync.Mutex
	acked      bool          // the initial response is decided
	finalFirst bool          // the initial response is a type 7 showing the final state
	finalLater bool          // the final state goes out as an edit after the acknowledgement
	decided    func()        // called once the initial response is decided
	budget     time.Duration // how long the initial response may wait for the handler
	sentOnce   sync.Once

	// update is set while this interaction may finish its copy itself (in
	// its type 7 response, or by editing it through its token after a
	// deferred acknowledgement), so Finish need not edit it too.
	update *copyUpdate
}

// copyUpdate is an interaction that is answering a question on one copy.
type copyUpdate struct {
	done  chan struct{}
	once  sync.Once
	final bool // the interaction showed the final state on the copy
}

// expectUpdate tells Finish, for as long as this interaction is being
// answered, that its copy may be updated by the interaction itself.
func (x *exchange) expectUpdate() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.in.Message == nil || x.update != nil {
		return
	}
	x.update = &copyUpdate{done: make(chan struct{})}
	x.a.updating.Store(x.in.Message.ID, x.update)
}

// settle releases a Finish waiting on this interaction's copy; final
// reports whether the interaction showed the final state there.
func (x *exchange) settle(final bool) {
	x.mu.Lock()
	u := x.update
	x.mu.Unlock()
	if u == nil {
		return
	}
	u.once.Do(func() {
		u.final = final
		close(u.done)
		id := x.in.Message.ID
		if !final {
			x.a.updating.CompareAndDelete(id, u)
			return
		}
		// Finish may run after this (it starts in the background once the
		// answer is stored): it takes the entry; else it goes in a while.
		// The timer holds the adapter's map, not the exchange and its
		// decoded interaction.
		updating := &x.a.updating
		time.AfterFunc(updateMemory, func() { updating.CompareAndDelete(id, u) })
	})
}

// handled releases a Finish waiting on the copy once the handler is over,
// unless the final state is in the initial response (markSent settles then).
func (x *exchange) handled() {
	x.mu.Lock()
	first := x.finalFirst
	x.mu.Unlock()
	if !first {
		x.settle(false)
	}
}

// updateMemory is how long a copy whose final state an interaction showed
// is remembered, so Finish skips editing it again.
const updateMemory = time.Minute

// maxWorkers bounds how many interactions are handled at once (store
// reads, the atomic answer, renders).
const maxWorkers = 8

// exchange starts handling in in tracked background work. An interaction
// that arrives while none is being handled is answered in its initial
// response (type 7 with the final state: one round trip). During a burst,
// the acknowledgement must not wait for the store: the interaction is
// acknowledged at once with a deferred update and handled by a bounded pool
// of workers; its outcome becomes an edit of the message or a follow-up.
// Clicks that open a modal cannot be deferred (the modal must be the
// initial response) and are handled at once.
func (a *Adapter) exchange(in *inbound) *exchange {
	x := &exchange{a: a, in: in, first: make(chan *discordgo.InteractionResponse, 1), sent: make(chan struct{}),
		budget: a.cfg.AckAfter}
	a.pool.Arrived()
	run := func(ctx context.Context) {
		defer x.handled()
		defer x.ensureAck()
		defer func() {
			if p := recover(); p != nil {
				a.log.Error("handling a Discord interaction panicked", "interaction", in.ID, "panic", p)
			}
		}()
		a.handle(ctx, x)
	}
	if opensModal(in) {
		x.budget = max(a.cfg.AckAfter, a.cfg.ModalAckAfter)
		a.goTrack(run)
		return x
	}
	// Inline only for a click that comes alone: no other waits for its
	// initial response or was acknowledged and is still queued or being
	// handled (a burst is not over until those are done), and a worker is
	// free. During a burst the acknowledgements go first.
	if a.undecided.Load() == 0 && a.queued.Load() == 0 {
		// Counted before the worker is taken: its initial response may be
		// decided (awaitFirst) before the work starts.
		a.undecided.Add(1)
		x.decided = func() { a.undecided.Add(-1) }
		if a.pool.TryGo(run) {
			return x
		}
		x.decided = nil
		a.undecided.Add(-1)
	}
	x.reply(context.Background(), deferredUpdate) // acknowledged now; the outcome follows
	a.queued.Add(1)
	a.goTrack(func(ctx context.Context) {
		defer a.queued.Add(-1)
		a.pool.Run(ctx, run)
	})
	return x
}

// idle waits for d without holding a worker slot, so an answer waiting for
// its run to pause does not hold up other interactions.
func (a *Adapter) idle(ctx context.Context, d time.Duration) error { return a.pool.Idle(ctx, d) }

// opensModal reports whether the interaction may have to be answered with
// a modal: "Other…", "Answer…", or "Other…" chosen in a select.
func opensModal(in *inbound) bool {
	if in.Type != typeComponent {
		return false
	}
	act, ok := parseCustomID(in.Data.CustomID)
	if !ok {
		return false
	}
	switch act.Kind {
	case actOther, actText:
		return true
	case actSelect:
		for _, v := range in.Data.Values {
			if v == otherValue {
				return true
			}
		}
	}
	return false
}

// setAcked marks the initial response decided. Call with x.mu held.
func (x *exchange) setAcked() {
	x.acked = true
	if x.decided != nil {
		x.decided()
		x.decided = nil
	}
}

// awaitFirst returns the initial response, or a deferred update when the
// handler has not decided within its budget (Discord's deadline is 3 s).
func (a *Adapter) awaitFirst(x *exchange) *discordgo.InteractionResponse {
	t := time.NewTimer(x.budget)
	defer t.Stop()
	select {
	case r := <-x.first:
		return r
	case <-t.C:
		x.mu.Lock()
		took := !x.acked
		x.setAcked()
		x.mu.Unlock()
		if took {
			a.log.Info("interaction slow to handle; acknowledged with a deferred update", "interaction", x.in.ID)
			return &discordgo.InteractionResponse{Type: responseDeferUpdate}
		}
		return <-x.first
	}
}

// markSent records that the initial response went out (ok) or failed.
func (x *exchange) markSent(ok bool) {
	x.sentOnce.Do(func() {
		close(x.sent)
		x.mu.Lock()
		final := x.finalFirst
		x.mu.Unlock()
		if final {
			x.settle(ok)
		}
	})
}

// ensureAck acknowledges an interaction the handler left unanswered.
func (x *exchange) ensureAck() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.acked {
		x.setAcked()
		x.first <- &discordgo.InteractionResponse{Type: responseDeferUpdate}
	}
}

// replyFinal replies with the copy's final state.
func (x *exchange) replyFinal(ctx context.Context, resp *discordgo.InteractionResponse) {
	x.mu.Lock()
	if !x.acked {
		x.finalFirst = true
	} else {
		x.finalLater = true
	}
	x.mu.Unlock()
	x.reply(ctx, resp)
}

// reply answers the interaction: as the initial response when none went
// out yet, else as an edit of the clicked message (updates) or a
// follow-up (ephemeral messages).
func (x *exchange) reply(ctx context.Context, resp *discordgo.InteractionResponse) {
	x.mu.Lock()
	if !x.acked {
		x.setAcked()
		x.first <- resp
		x.mu.Unlock()
		return
	}
	x.mu.Unlock()
	if resp.Type == responseDeferUpdate {
		return
	}
	select {
	case <-x.sent:
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
		return
	}
	a, in := x.a, x.in
	app := in.AppID
	if app == "" {
		app = a.cfg.ApplicationID
	}
	var err error
	switch resp.Type {
	case responseUpdate:
		d := resp.Data
		err = a.call(ctx, "editing the clicked message", func(opts ...discordgo.RequestOption) error {
			_, err := a.s.WebhookMessageEdit(app, in.Token, "@original", &discordgo.WebhookEdit{
				Content: &d.Content, Embeds: &d.Embeds, Components: &d.Components, AllowedMentions: noMentions(),
			}, opts...)
			return err
		})
		x.mu.Lock()
		final := x.finalLater
		x.mu.Unlock()
		if final {
			x.settle(err == nil)
		}
	default:
		content := "That took too long; please click again."
		if resp.Type == responseMessage && resp.Data != nil {
			content = resp.Data.Content
		}
		err = a.call(ctx, "sending a follow-up", func(opts ...discordgo.RequestOption) error {
			_, err := a.s.WebhookExecute(app, in.Token, false, &discordgo.WebhookParams{
				Content: content, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions(),
			}, opts...)
			return err
		})
	}
	if err != nil {
		a.log.Warn("following up an interaction failed", "interaction", in.ID, "err", err)
	}
}

func ephemeral(text string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: responseMessage, Data: &discordgo.InteractionResponseData{
		Content: core.Shorten(text, maxContent), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions(),
		Components: []discordgo.MessageComponent{}, Embeds: []*discordgo.MessageEmbed{},
	}}
}

func update(m message) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: responseUpdate, Data: &discordgo.InteractionResponseData{
		Content: m.Content, Embeds: m.Embeds, Components: m.Components, AllowedMentions: noMentions(),
	}}
}

var deferredUpdate = &discordgo.InteractionResponse{Type: responseDeferUpdate}

// handle decides what an interaction does. Every path replies once.
func (a *Adapter) handle(ctx context.Context, x *exchange) {
	in := x.in
	if in.Type != typeComponent && in.Type != typeModalSubmit {
		x.reply(ctx, ephemeral("This application only handles askbridge questions."))
		return
	}
	act, ok := parseCustomID(in.Data.CustomID)
	if !ok || (in.Type == typeModalSubmit) != (act.Kind == actModal) {
		x.reply(ctx, ephemeral("This control does not belong to an askbridge question."))
		return
	}
	project, err := a.router.Locate(ctx, act.QuestionID)
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	q, err := a.router.Question(ctx, project, act.QuestionID)
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	if act.Item >= len(q.Questions) || (act.Option >= 0 && act.Option >= len(q.Questions[act.Item].Options)) {
		x.reply(ctx, ephemeral("This control no longer matches the question."))
		return
	}
	who := in.person()
	switch act.Kind {
	case actOption:
		it := q.Questions[act.Item]
		if shapeOf(q) != shapeSingleButtons {
			x.reply(ctx, deferredUpdate)
			return
		}
		a.answer(ctx, x, q, who, map[string]core.StringList{it.Question: {it.Options[act.Option].Label}})
	case actDismiss:
		x.expectUpdate()
		final, err := a.router.Cancel(ctx, project, q.ID, core.CancelUser, &who)
		a.outcome(ctx, x, final, who, err)
	case actOther, actText:
		if !a.gate(ctx, x, q, who) {
			return
		}
		prefill := ""
		if usesDrafts(q) {
			draft, _ := a.router.GetDraft(ctx, project, q.ID, draftKey(who))
			prefill = freeText(q.Questions[act.Item], draft[q.Questions[act.Item].Question])
		}
		x.reply(ctx, modalFor(q, act.Item, prefill))
	case actSelect:
		if !a.gate(ctx, x, q, who) {
			return
		}
		a.selectChanged(ctx, x, q, who, act.Item, in.Data.Values)
	case actSubmit:
		if !a.gate(ctx, x, q, who) {
			return
		}
		draft, err := a.router.GetDraft(ctx, project, q.ID, draftKey(who))
		if err != nil {
			a.failed(ctx, x, err)
			return
		}
		var missing []string
		answers := map[string]core.StringList{}
		for i, it := range q.Questions {
			if len(draft[it.Question]) == 0 {
				missing = append(missing, itemName(it, i))
				continue
			}
			answers[it.Question] = draft[it.Question]
		}
		if len(missing) > 0 {
			x.reply(ctx, ephemeral("Still to answer: "+strings.Join(missing, ", ")+". Make your choices above, then press Submit."))
			return
		}
		a.answer(ctx, x, q, who, answers)
	case actModal:
		it := q.Questions[act.Item]
		text := in.text()
		if text == "" {
			x.reply(ctx, ephemeral("The answer was empty; nothing was recorded."))
			return
		}
		if q.Kind == core.KindApproval && !it.OpenEnded() {
			// Only "Deny with note…" opens a modal on an approval: the text
			// denies, and never reads as another option.
			if text = approval.NoteAnswer(q, text); text == "" {
				x.reply(ctx, ephemeral("This approval is decided with its buttons; a note cannot be added to it."))
				return
			}
		}
		if !usesDrafts(q) {
			a.answer(ctx, x, q, who, map[string]core.StringList{it.Question: {text}})
			return
		}
		if !a.gate(ctx, x, q, who) {
			return
		}
		err := a.editDraft(ctx, q, who, func(d map[string][]string) {
			var keep []string
			if it.MultiSelect {
				keep = optionLabels(it, d[it.Question])
			}
			d[it.Question] = append(keep, text)
		})
		if err != nil {
			a.failed(ctx, x, err)
			return
		}
		x.reply(ctx, ephemeral("Saved your answer to "+itemName(it, act.Item)+". Press Submit when everything is answered."))
		a.rememberToken(ctx, q, in.discordgo())
	}
}

// discordgo returns the fields of the interaction rememberToken needs.
func (in *inbound) discordgo() *discordgo.Interaction {
	i := &discordgo.Interaction{ID: in.ID, AppID: in.AppID, Token: in.Token}
	if in.Message != nil {
		i.Message = &discordgo.Message{ID: in.Message.ID}
	}
	return i
}

// selectChanged keeps the person's choice for one item in their draft.
// Choosing "Other…" opens the modal for the free text.
func (a *Adapter) selectChanged(ctx context.Context, x *exchange, q *core.Question, who core.Person, item int, values []string) {
	it := q.Questions[item]
	var labels []string
	other := false
	for _, v := range values {
		if v == otherValue {
			other = true
			continue
		}
		j, err := strconv.Atoi(v)
		if err != nil || j < 0 || j >= len(it.Options) {
			x.reply(ctx, ephemeral("That choice no longer matches the question."))
			return
		}
		labels = append(labels, it.Options[j].Label)
	}
	var prior []string
	err := a.editDraft(ctx, q, who, func(d map[string][]string) {
		prior = d[it.Question]
		next := labels
		if other { // keep the free text until the modal replaces it
			if t := freeText(it, prior); t != "" {
				next = append(next, t)
			}
		}
		d[it.Question] = next
	})
	if err != nil {
		a.failed(ctx, x, err)
		return
	}
	if other {
		x.reply(ctx, modalFor(q, item, freeText(it, prior)))
	} else {
		x.reply(ctx, deferredUpdate)
	}
	a.rememberToken(ctx, q, x.in.discordgo())
}

// editDraft applies fn to the person's draft and stores it until shortly
// after the question's deadline (at most a day), readable by any replica.
func (a *Adapter) editDraft(ctx context.Context, q *core.Question, who core.Person, fn func(map[string][]string)) error {
	st := a.router
	d, err := st.GetDraft(ctx, q.ProjectID, q.ID, draftKey(who))
	if err != nil {
		return err
	}
	if d == nil {
		d = map[string][]string{}
	}
	fn(d)
	ttl := min(max(q.ExpiresAt.Sub(a.now())+time.Minute, time.Minute), 24*time.Hour)
	return st.PutDraft(ctx, q.ProjectID, q.ID, draftKey(who), d, ttl)
}

func draftKey(p core.Person) string { return "discord:" + p.ID }

// optionLabels keeps the choices that are option labels.
func optionLabels(it core.Item, choices []string) []string {
	var out []string
	for _, c := range choices {
		for _, o := range it.Options {
			if o.Label == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// freeText returns the choice that is not an option label, if any.
func freeText(it core.Item, choices []string) string {
	for _, c := range choices {
		if len(optionLabels(it, []string{c})) == 0 {
			return c
		}
	}
	return ""
}

// gate lets through a person who may act on a pending question, and tells
// anyone else why nothing happens.
func (a *Adapter) gate(ctx context.Context, x *exchange, q *core.Question, who core.Person) bool {
	if q.Status != core.StatusPending {
		x.reply(ctx, ephemeral(lateMessage(q)))
		return false
	}
	if err := a.router.Check(ctx, q, who); err != nil {
		x.reply(ctx, ephemeral(notAllowedMessage(q, who)))
		return false
	}
	return true
}

// answer records the answer; while the run has not paused yet (webhook
// mode) it acknowledges at once and retries for RunNotPausedWait.
func (a *Adapter) answer(ctx context.Context, x *exchange, q *core.Question, who core.Person, answers map[string]core.StringList) {
	req := core.RespondRequest{Answers: answers}
	x.expectUpdate()
	final, err := a.router.Answer(ctx, q.ProjectID, q.ID, req, who)
	if core.ErrorCode(err) == core.ERunNotPaused {
		x.reply(ctx, deferredUpdate)
		deadline := time.Now().Add(a.cfg.RunNotPausedWait)
		for core.ErrorCode(err) == core.ERunNotPaused && time.Now().Before(deadline) {
			if a.idle(ctx, min(500*time.Millisecond, time.Until(deadline))) != nil {
				return
			}
			final, err = a.router.Answer(ctx, q.ProjectID, q.ID, req, who)
		}
		if core.ErrorCode(err) == core.ERunNotPaused {
			x.reply(ctx, ephemeral("The agent's run has not paused yet, so your answer was not recorded. Please click again in a moment."))
			return
		}
	}
	a.outcome(ctx, x, final, who, err)
}

// outcome replies to the result of an answer or dismissal.
func (a *Adapter) outcome(ctx context.Context, x *exchange, q *core.Question, who core.Person, err error) {
	if err == nil && q.Status == core.StatusPending {
		// A vote that did not decide an approval yet: the clicked copy
		// shows the tally; Update brings the other copies along. Not a
		// final state, so Finish must still edit this copy later.
		x.reply(ctx, update(render(q, a.now())))
		return
	}
	if err == nil {
		x.replyFinal(ctx, update(render(q, a.now())))
		return
	}
	switch core.ErrorCode(err) {
	case core.ENotAllowed:
		x.reply(ctx, ephemeral(notAllowedMessage(q, who)))
	case core.EAlreadyAnswered, core.EQuestionCancelled, core.EQuestionExpired:
		x.reply(ctx, ephemeral(lateMessage(q)))
	default:
		a.failed(ctx, x, err)
	}
}

// failed tells the person something went wrong, without internals.
func (a *Adapter) failed(ctx context.Context, x *exchange, err error) {
	switch core.ErrorCode(err) {
	case core.ENotFound:
		x.reply(ctx, ephemeral("This question no longer exists."))
	case core.EInvalidAnswer:
		x.reply(ctx, ephemeral("That answer was not accepted: "+err.Error()))
	default:
		a.log.Error("handling a Discord interaction failed", "interaction", x.in.ID, "custom_id", x.in.Data.CustomID, "err", err)
		x.reply(ctx, ephemeral("Sorry, something went wrong and nothing was recorded. Please try again."))
	}
}

// notAllowedMessage tells who why their click changed nothing and names
// who may answer. It follows core.Permit: a requester the route excludes
// is told so, since they may well hold a responder role.
func notAllowedMessage(q *core.Question, who core.Person) string {
	if q.Responders.ExcludeRequester && q.RequestedBy != "" && q.RequestedBy == who.Platform+":"+who.ID {
		others := "anyone else"
		if !q.Responders.Empty() {
			others = core.DescribeResponders(q.Responders)
		}
		return "You asked for this, so you may not answer it yourself; who may answer: " + others + ". Nothing was changed."
	}
	return "Only " + core.DescribeResponders(q.Responders) + " may answer this question; nothing was changed."
}

// lateMessage tells a late clicker what became of the question.
func lateMessage(q *core.Question) string {
	switch q.Status {
	case core.StatusAnswered:
		by := "someone"
		if q.RespondedBy != nil {
			by = q.RespondedBy.String()
		}
		line := core.OutcomeLine(q)
		return "Already answered by " + by + strings.TrimPrefix(line, "Answered by "+by) + "."
	case core.StatusExpired:
		return "This question has expired; answers are no longer taken."
	case core.StatusCancelled:
		return "This question is closed: " + core.OutcomeLine(q) + "."
	}
	return "This question is no longer open."
}
