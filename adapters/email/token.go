package email

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"time"
)

// A link token names one recipient's one choice on one question: the
// question id, the option (FormChoice for the answer form), the recipient's
// address, when it expires and a random nonce, signed with HMAC-SHA256.
//
// It is decoded strictly: exactly one spelling of a token verifies. Base64
// without padding leaves unused low bits in the last character, and a
// lenient decoder accepts several spellings of the same bytes; a tampered
// token must never verify, so decoding uses the strict decoder and then
// encodes the bytes again and compares.

// FormChoice is the choice of an "Answer" link: it opens the form for the
// whole question instead of confirming one option.
const FormChoice = -1

// DefaultsChoice is the choice of a "Submit the defaults" link: it
// confirms every item asked under the defaults answered with them
// (domain.DefaultsRequest). It travels as the byte defaultsByte, which no
// option index uses, so links mailed before it existed read as before.
const DefaultsChoice = -2

const defaultsByte = 0xff

// AllowAllChoice and DenyAllChoice are the choices of a batch mail's
// "Allow all" and "Deny all" links: their token names the batch and how
// many calls the mail showed ("<batch id>#<n>", see batchRef) instead of
// a question. They travel as the bytes allowAllByte and denyAllByte.
const (
	AllowAllChoice = -3
	DenyAllChoice  = -4
	allowAllByte   = 0xfe
	denyAllByte    = 0xfd
)

// tokenVersion is the first byte of every token's payload.
const tokenVersion = 1

// maxTokenLen bounds a token as it arrives in a path, before any decoding.
const maxTokenLen = 1024

const (
	nonceLen = 12
	macLen   = sha256.Size
)

// token is a decoded, verified link token.
type token struct {
	Question  string
	Choice    int // option index, FormChoice or DefaultsChoice
	Recipient string
	Expires   time.Time
	Nonce     string // base64url of the random nonce: the token's single-use key
}

// Errors of a link that does not verify. Every one reads to a person as
// "this link is not valid"; tests tell them apart.
var (
	errTokenMalformed = errors.New("malformed link token")
	errTokenSignature = errors.New("link token signature does not match")
)

// keys derives the link-signing and page-binding keys from the configured
// secret, so one secret never signs two kinds of thing.
type keys struct{ link, page []byte }

func deriveKeys(secret []byte) keys {
	d := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("askbridge email " + label + " v1"))
		return m.Sum(nil)
	}
	return keys{link: d("link"), page: d("page")}
}

// sign returns the token for t (t.Nonce is set when empty).
func (k keys) sign(t token) (string, error) {
	if t.Nonce == "" {
		var n [nonceLen]byte
		if _, err := rand.Read(n[:]); err != nil {
			return "", err
		}
		t.Nonce = base64.RawURLEncoding.EncodeToString(n[:])
	}
	nonce, err := base64.RawURLEncoding.Strict().DecodeString(t.Nonce)
	if err != nil || len(nonce) != nonceLen {
		return "", errTokenMalformed
	}
	// payload: version | nonce | expires (8, big endian) | choice+1 (1) | question \x00 recipient
	p := []byte{tokenVersion}
	p = append(p, nonce...)
	p = binary.BigEndian.AppendUint64(p, uint64(t.Expires.Unix()))
	switch {
	case t.Choice == DefaultsChoice:
		p = append(p, defaultsByte)
	case t.Choice == AllowAllChoice:
		p = append(p, allowAllByte)
	case t.Choice == DenyAllChoice:
		p = append(p, denyAllByte)
	case t.Choice < FormChoice || t.Choice > 250:
		return "", errTokenMalformed
	default:
		p = append(p, byte(t.Choice+1))
	}
	p = append(p, t.Question...)
	p = append(p, 0)
	p = append(p, t.Recipient...)
	m := hmac.New(sha256.New, k.link)
	m.Write(p)
	p = m.Sum(p)
	return base64.RawURLEncoding.EncodeToString(p), nil
}

// verify decodes s strictly and checks its signature. It does not check
// expiry (the page says "expired" only for a genuine token).
func (k keys) verify(s string) (token, error) {
	if len(s) == 0 || len(s) > maxTokenLen {
		return token{}, errTokenMalformed
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != s {
		return token{}, errTokenMalformed
	}
	const head = 1 + nonceLen + 8 + 1
	if len(b) < head+1+macLen {
		return token{}, errTokenMalformed
	}
	p, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	m := hmac.New(sha256.New, k.link)
	m.Write(p)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return token{}, errTokenSignature
	}
	if p[0] != tokenVersion {
		return token{}, errTokenMalformed
	}
	q, rcpt, ok := strings.Cut(string(p[head:]), "\x00")
	if !ok || q == "" || rcpt == "" {
		return token{}, errTokenMalformed
	}
	choice := int(p[1+nonceLen+8]) - 1
	switch p[1+nonceLen+8] {
	case defaultsByte:
		choice = DefaultsChoice
	case allowAllByte:
		choice = AllowAllChoice
	case denyAllByte:
		choice = DenyAllChoice
	}
	return token{
		Question:  q,
		Choice:    choice,
		Recipient: rcpt,
		Expires:   time.Unix(int64(binary.BigEndian.Uint64(p[1+nonceLen:])), 0).UTC(),
		Nonce:     base64.RawURLEncoding.EncodeToString(p[1 : 1+nonceLen]),
	}, nil
}

// pageMAC binds a confirmation page's form to the token's nonce and the
// page cookie set with it: a POST needs both, and neither alone is enough.
func (k keys) pageMAC(nonce, cookie string) string {
	m := hmac.New(sha256.New, k.page)
	m.Write([]byte(strconv.Itoa(len(nonce)) + ":" + nonce + ":" + cookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkPageMAC compares in constant time.
func (k keys) checkPageMAC(nonce, cookie, got string) bool {
	if cookie == "" || got == "" {
		return false
	}
	return hmac.Equal([]byte(k.pageMAC(nonce, cookie)), []byte(got))
}

// randomString is n random bytes in base64url.
func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
