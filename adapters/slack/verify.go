package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxSkew is how far a request's timestamp may be from now (Slack: 5 min).
const maxSkew = 5 * time.Minute

var (
	errUnsigned = errors.New("missing X-Slack-Signature or X-Slack-Request-Timestamp")
	errStale    = errors.New("request timestamp more than 5 minutes away")
	errForged   = errors.New("signature does not match")
)

// verify checks Slack's v0 signature of a raw request body: HMAC-SHA256 of
// "v0:<timestamp>:<body>" with the signing secret, compared in constant time.
func verify(h http.Header, body []byte, secret string, now time.Time) error {
	sig, ts := h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp")
	if sig == "" || ts == "" || secret == "" {
		return errUnsigned
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errForged
	}
	if d := now.Sub(time.Unix(secs, 0)); d > maxSkew || d < -maxSkew {
		return errStale
	}
	got, err := hex.DecodeString(strings.TrimPrefix(sig, "v0="))
	if err != nil || !strings.HasPrefix(sig, "v0=") {
		return errForged
	}
	if !hmac.Equal(got, sign(secret, ts, body)) {
		return errForged
	}
	return nil
}

func sign(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":"))
	m.Write(body)
	return m.Sum(nil)
}

// Sign returns the X-Slack-Signature of body at ts, for tests and tools
// that play Slack.
func Sign(secret string, ts time.Time, body []byte) (timestamp, signature string) {
	timestamp = strconv.FormatInt(ts.Unix(), 10)
	return timestamp, "v0=" + hex.EncodeToString(sign(secret, timestamp, body))
}
