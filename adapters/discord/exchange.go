package discord

import (
	"context"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/bwmarrin/discordgo"
)

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
		Content: domain.Shorten(text, maxContent), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions(),
		Components: []discordgo.MessageComponent{}, Embeds: []*discordgo.MessageEmbed{},
	}}
}

func update(m message) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: responseUpdate, Data: &discordgo.InteractionResponseData{
		Content: m.Content, Embeds: m.Embeds, Components: m.Components, AllowedMentions: noMentions(),
	}}
}

var deferredUpdate = &discordgo.InteractionResponse{Type: responseDeferUpdate}
