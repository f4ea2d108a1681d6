package webhook

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSignVerify(t *testing.T) {
	secret := []byte("s3cret")
	body := []byte(`{"event":"question.answered"}`)
	now := time.Unix(1700000000, 0)
	h := Sign(secret, now, body)
	assert.Regexp(t, `^t=1700000000,v1=[0-9a-f]{64}$`, h)
	assert.NoError(t, Verify(secret, h, body, 0, now.Add(time.Minute)))
	assert.ErrorIs(t, Verify(secret, h, []byte(`{"event":"x"}`), 0, now), ErrBadSignature)
	assert.ErrorIs(t, Verify([]byte("other"), h, body, 0, now), ErrBadSignature)
	assert.ErrorIs(t, Verify(secret, h, body, 0, now.Add(6*time.Minute)), ErrStaleSignature)
	assert.ErrorIs(t, Verify(secret, "", body, 0, now), ErrMissingSignature)
	assert.ErrorIs(t, Verify(secret, "t=abc,v1=00", body, 0, now), ErrMissingSignature)
	assert.NotContains(t, Verify(secret, h, []byte("x"), 0, now).Error(), "s3cret")
}
