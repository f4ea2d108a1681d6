package discord

import (
	"crypto/ed25519"
	"errors"

	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// publicKey is the application's Ed25519 public key, decoded and expanded
// once: every interaction is verified against the same key, and
// crypto/ed25519.Verify decompresses the key and builds its multiplication
// table on every call. Verification is RFC 8032 Ed25519 exactly as
// crypto/ed25519 does it (the VerifyOptionsStdLib preset: cofactorless,
// s < L and a canonical R required, the key hashed as given); see
// TestVerifyMatchesStdlib.
type publicKey struct {
	expanded *voi.ExpandedPublicKey
}

var verifyStdlib = &voi.Options{Verify: voi.VerifyOptionsStdLib}

func newPublicKey(raw []byte) (*publicKey, error) {
	if len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("ed25519: bad public key length")
	}
	x, err := voi.NewExpandedPublicKey(voi.PublicKey(raw))
	if err != nil {
		return nil, err
	}
	return &publicKey{expanded: x}, nil
}

// verify reports whether sig is a valid signature of msg by the key.
func (k *publicKey) verify(msg, sig []byte) bool {
	return len(sig) == ed25519.SignatureSize && voi.VerifyExpandedWithOptions(k.expanded, msg, sig, verifyStdlib)
}
