// Package webhook signs and verifies askbridge resume webhooks (docs/agents.md "Webhook mode"):
// X-Askbridge-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>.
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
)

// Sign returns the X-Askbridge-Signature value for body at time t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks header against body in constant time and refuses
// timestamps more than tolerance away from now. Several v1= values (secret
// rotation) are accepted if any matches.
func Verify(secret []byte, header string, body []byte, tolerance time.Duration, now time.Time) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrMissingSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrStaleSignature
	}
	want := []byte(mac(secret, ts, body))
	ok := false
	for _, s := range sigs {
		if hmac.Equal(want, []byte(s)) {
			ok = true
		}
	}
	if !ok {
		return ErrBadSignature
	}
	return nil
}
