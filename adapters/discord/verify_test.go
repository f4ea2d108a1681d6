package discord

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
)

// TestVerifyMatchesStdlib: the expanded-key verification accepts exactly
// what crypto/ed25519.Verify accepts: valid signatures, and none of their
// tamperings (message, signature bits, s+L, a signature by another key),
// nor the edge cases of small-order and non-canonical encodings.
func TestVerifyMatchesStdlib(t *testing.T) {
	check := func(name string, pub ed25519.PublicKey, msg, sig []byte) bool {
		t.Helper()
		want := ed25519.Verify(pub, msg, sig)
		k, err := newPublicKey(pub)
		if err != nil {
			if want {
				t.Fatalf("%s: key refused (%v) but stdlib verifies", name, err)
			}
			return false
		}
		if got := k.verify(msg, sig); got != want {
			t.Fatalf("%s: verify = %v, crypto/ed25519 = %v", name, got, want)
		}
		return want
	}
	for i := range 20 {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, i*97)
		rand.Read(msg)
		msg = append([]byte(strconv.FormatInt(time.Now().Unix(), 10)), msg...)
		sig := ed25519.Sign(priv, msg)
		if !check("valid", pub, msg, sig) {
			t.Fatal("a valid signature did not verify")
		}
		for j := range len(sig) * 8 {
			bad := bytes.Clone(sig)
			bad[j/8] ^= 1 << (j % 8)
			if check("flipped signature bit", pub, msg, bad) {
				t.Fatalf("signature with bit %d flipped verified", j)
			}
		}
		for j := 0; j < len(msg); j += 13 {
			bad := bytes.Clone(msg)
			bad[j] ^= 0x20
			if check("tampered message", pub, bad, sig) {
				t.Fatalf("message with byte %d changed verified", j)
			}
		}
		if check("truncated message", pub, msg[:len(msg)-1], sig) || check("short signature", pub, msg, sig[:63]) {
			t.Fatal("a truncated message or signature verified")
		}
		other, _, _ := ed25519.GenerateKey(rand.Reader)
		if check("other key", other, msg, sig) {
			t.Fatal("a signature verified under another key")
		}
		// s + L: the same signature with a non-canonical s (malleability).
		if check("s+L", pub, msg, withSPlusL(sig)) {
			t.Fatal("a signature with s+L verified")
		}
	}
	// Edge cases: the identity as key and as R, with s = 0 (small order),
	// and a non-canonical encoding of the identity (y = p+1) as key.
	identity := make([]byte, 32)
	identity[0] = 1
	nonCanonical := bytes.Repeat([]byte{0xff}, 32)
	nonCanonical[0], nonCanonical[31] = 0xee, 0x7f
	sig := append(bytes.Clone(identity), make([]byte, 32)...)
	for _, pub := range [][]byte{identity, nonCanonical} {
		check("small-order key and R", pub, []byte("hello"), sig)
		check("small-order key and R, non-canonical R", pub, []byte("hello"), append(bytes.Clone(nonCanonical), make([]byte, 32)...))
	}
}

// withSPlusL returns sig with s replaced by s+L, the same scalar mod L.
func withSPlusL(sig []byte) []byte {
	le := func(b []byte) *big.Int {
		be := bytes.Clone(b)
		for i, j := 0, len(be)-1; i < j; i, j = i+1, j-1 {
			be[i], be[j] = be[j], be[i]
		}
		return new(big.Int).SetBytes(be)
	}
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	s := new(big.Int).Add(le(sig[32:]), l)
	out := bytes.Clone(sig)
	be := s.FillBytes(make([]byte, 32))
	for i := range 32 {
		out[32+i] = be[31-i]
	}
	return out
}

// TestHandlerVerifiesLikeStdlib: through the adapter's check of the
// headers, a signature crypto/ed25519 made (the fake signs with it) and
// accepts passes; the same with the body, the timestamp or the signature
// changed does not.
func TestHandlerVerifiesLikeStdlib(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	pub, err := hex.DecodeString(f.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":3,"id":"1","data":{"custom_id":"x"}}`)
	now := time.Now()
	sigHex, stamp := f.Sign(body, now)
	sig, _ := hex.DecodeString(sigHex)
	if !ed25519.Verify(pub, append([]byte(stamp), body...), sig) {
		t.Fatal("crypto/ed25519 refuses the fake's signature")
	}
	verify := func(h http.Header, body []byte) bool {
		ts := h.Get("X-Signature-Timestamp")
		return e.ad.verify(h, append([]byte(ts), body...), len(ts))
	}
	header := func(sig []byte, stamp string) http.Header {
		h := http.Header{}
		h.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
		h.Set("X-Signature-Timestamp", stamp)
		return h
	}
	if !verify(header(sig, stamp), body) {
		t.Fatal("a valid signature was refused")
	}
	bad := bytes.Clone(sig)
	bad[10] ^= 4
	for name, ok := range map[string]bool{
		"tampered body":      verify(header(sig, stamp), bytes.Replace(body, []byte(`"x"`), []byte(`"y"`), 1)),
		"tampered signature": verify(header(bad, stamp), body),
		"other timestamp":    verify(header(sig, strconv.FormatInt(now.Unix()-1, 10)), body),
		"s+L":                verify(header(withSPlusL(sig), stamp), body),
	} {
		if ok {
			t.Errorf("%s: verified", name)
		}
	}
}

// BenchmarkVerify is one signature check of a 2.5 KB interaction:
// crypto/ed25519 against the expanded key.
func BenchmarkVerify(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	msg := make([]byte, 2500)
	sig := ed25519.Sign(priv, msg)
	b.Run("stdlib", func(b *testing.B) {
		for b.Loop() {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("expanded", func(b *testing.B) {
		k, _ := newPublicKey(pub)
		for b.Loop() {
			if !k.verify(msg, sig) {
				b.Fatal("refused")
			}
		}
	})
}

// TestSignedBodyReads: a signed interaction is read whole whether or not
// the request announces its length, and a body over the limit is refused
// before anything else.
func TestSignedBodyReads(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	h := e.ad.InteractionsHandler()
	body := []byte(`{"type":1,"id":"1"}`)
	sig, stamp := f.Sign(body, time.Now())
	for _, c := range []struct {
		name   string
		length int64 // -1: unknown, as with a chunked request
		body   []byte
		want   int
	}{
		{"with Content-Length", int64(len(body)), body, http.StatusOK},
		{"chunked", -1, body, http.StatusOK},
		{"too large", -1, append(bytes.Clone(body), bytes.Repeat([]byte(" "), maxInteractionBody)...), http.StatusRequestEntityTooLarge},
		{"too large, announced", maxInteractionBody + 1, append(bytes.Clone(body), bytes.Repeat([]byte(" "), maxInteractionBody)...), http.StatusRequestEntityTooLarge},
	} {
		req := httptest.NewRequest("POST", "/discord/interactions", bytes.NewReader(c.body))
		req.ContentLength = c.length
		req.Header.Set("X-Signature-Ed25519", sig)
		req.Header.Set("X-Signature-Timestamp", stamp)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: HTTP %d, want %d", c.name, rec.Code, c.want)
		}
		if c.want == http.StatusOK && rec.Body.String() != `{"type":1}` {
			t.Errorf("%s: PING answered %q", c.name, rec.Body)
		}
	}
}
