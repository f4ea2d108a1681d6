package slack

import (
	"context"
	"encoding/json"

	"github.com/slack-go/slack/socketmode"
)

// Start runs Socket Mode until ctx ends when an app token is configured, and
// returns nil at once otherwise (the HTTP endpoints of Register are used).
// Interactions and events go through the same handlers as over HTTP.
func (a *Adapter) Start(ctx context.Context) error {
	if !a.SocketMode() {
		return nil
	}
	sm := socketmode.New(a.api)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case evt, ok := <-sm.Events:
				if !ok {
					return
				}
				a.socketEvent(sm, evt)
			}
		}
	}()
	err := sm.RunContext(ctx)
	<-done
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (a *Adapter) socketEvent(sm *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		a.log.Info("socket mode connected")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		a.log.Warn("socket mode connection problem", "type", string(evt.Type))
	case socketmode.EventTypeInteractive:
		if evt.Request == nil {
			return
		}
		a.arrived()
		var resp any
		if ic, err := parseInteraction(evt.Request.Payload); err == nil {
			resp = a.interact(ic)
		}
		if err := sm.Ack(*evt.Request, resp); err != nil {
			a.log.Warn("acknowledging a socket mode interaction failed", "err", err)
		}
	case socketmode.EventTypeEventsAPI:
		if evt.Request == nil {
			return
		}
		a.arrived()
		_ = sm.Ack(*evt.Request)
		var ev outerEvent
		if err := json.Unmarshal(evt.Request.Payload, &ev); err == nil {
			a.event(ev)
		}
	}
}
