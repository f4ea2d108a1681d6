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
	"time"

	docshape "github.com/askbridge/askbridge/internal/shape"
	"github.com/bwmarrin/discordgo"
)

// maxInteractionBody bounds a signed interaction request.
const maxInteractionBody = 1 << 20

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
		if docshape.CheckDepth(body, docshape.MaxDepth) != nil {
			http.Error(w, "interaction nests too deeply", http.StatusBadRequest)
			return
		}
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

// writeJSON writes v as the whole response with its Content-Length, so
// that headers and body leave in one write (not chunked, which takes a
// second write for the terminating chunk).
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

// replayWindow is how long an interaction id is remembered: longer than
// the signature's timestamp is accepted.
const replayWindow = 10 * time.Minute

// firstTime reports whether interaction id is seen for the first time on
// any replica. When the store cannot say, it lets the interaction through
// (answering needs the store anyway).
func (a *Adapter) firstTime(ctx context.Context, id string) bool {
	if id == "" {
		return true
	}
	first, err := a.router.Once(ctx, "discord:interaction:"+id, replayWindow)
	return err != nil || first
}
