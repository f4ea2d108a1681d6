// Package webhook signs and verifies askbridge resume webhooks (docs/agents.md "Webhook mode"):
//
//	X-Askbridge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>,
//	                       v2=<hex HMAC-SHA256(secret, "<t>.<X-Askbridge-Delivery>.<raw body>")>
//
// v2 also covers the delivery id, which receivers de-duplicate on; v1 is
// still sent for receivers written against it.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header names of a resume webhook.
const (
	HeaderEvent     = "X-Askbridge-Event"
	HeaderDelivery  = "X-Askbridge-Delivery"
	HeaderSignature = "X-Askbridge-Signature"
)

// DefaultTolerance is how far a signature's timestamp may be from now.
const DefaultTolerance = 5 * time.Minute

// Verification errors. They never contain the secret or the signature.
var (
	ErrMissingSignature = errors.New("webhook: missing or malformed " + HeaderSignature + " header")
	ErrStaleSignature   = errors.New("webhook: signature timestamp outside the tolerance")
	ErrBadSignature     = errors.New("webhook: signature does not match the body")
	ErrReplayed         = errors.New("webhook: this signature was already used; a delivery is never sent twice with one signature")
	// ErrNoSecret: anyone can sign with an empty secret, so nothing is
	// verified without one.
	ErrNoSecret = errors.New("webhook: no signing secret: set BRIDGE_WEBHOOK_SECRET (the bridge's webhooks.secret, or the agent's webhook_secret) and pass it as the secret")
)

// Sign returns the v1-only X-Askbridge-Signature value for body at time t,
// as bridges before v2 sent it. Use SignDelivery.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

// SignDelivery returns the X-Askbridge-Signature value of delivery id with
// body at time t: v1 over the timestamp and body, v2 over the timestamp,
// the delivery id and the body.
func SignDelivery(secret []byte, t time.Time, id string, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body) + ",v2=" + mac(secret, ts+"."+id, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks the v1 signature of header against body in constant time
// and refuses timestamps more than tolerance away from now, and anything
// at all without a secret (ErrNoSecret). Several v1= values (secret
// rotation) are accepted if any matches. It does not cover the delivery
// id: use VerifyDelivery.
func Verify(secret []byte, header string, body []byte, tolerance time.Duration, now time.Time) error {
	_, err := verify(secret, header, "", body, tolerance, now, false)
	return err
}

// VerifyDelivery checks header against delivery id and body: the v2
// signature when the header has one (it covers the id), else v1 (bridges
// before v2; accepted for this release, with the receiver's replay check
// keeping a captured v1 delivery from being sent again under a new id). It
// returns what identifies this signing (the v1 signature of its timestamp
// and body, whichever form matched), for that replay check: a captured
// delivery sent again has the same one, with or without its v2.
func VerifyDelivery(secret []byte, header, id string, body []byte, tolerance time.Duration, now time.Time) (string, error) {
	return verify(secret, header, id, body, tolerance, now, true)
}

func verify(secret []byte, header, id string, body []byte, tolerance time.Duration, now time.Time, v2 bool) (string, error) {
	if len(secret) == 0 {
		return "", ErrNoSecret
	}
	var ts string
	var v1s, v2s []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			v1s = append(v1s, v)
		case "v2":
			v2s = append(v2s, v)
		}
	}
	sigs, want := v1s, mac(secret, ts, body)
	if v2 && len(v2s) > 0 {
		sigs, want = v2s, mac(secret, ts+"."+id, body)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return "", ErrMissingSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return "", ErrStaleSignature
	}
	for _, s := range sigs {
		if hmac.Equal([]byte(want), []byte(s)) {
			return ts + "." + mac(secret, ts, body), nil
		}
	}
	return "", ErrBadSignature
}
