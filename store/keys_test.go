package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Ids and digests are packed only where they read back the same.
func TestPackedIDsAndDigestsReadBackTheSame(t *testing.T) {
	for _, id := range []string{"86029b78-d2f8-85b0-aad1-4a9d82971c71", "0b8e7a4e-6a53-4a3d-9f19-7d1b4c8a2e10",
		"86029B78-D2F8-85B0-AAD1-4A9D82971C71", "q-1", "", "86029b78d2f885b0aad14a9d82971c71", "86029b78-d2f8-85b0-aad1-4a9d82971c7"} {
		p := packID(id)
		assert.Equal(t, id, unpackID(p), "%q", id)
		if canonicalUUID(id) {
			assert.Len(t, p, 17, "%q", id)
		} else {
			assert.Equal(t, id, p, "only a canonical UUID is packed: %q", id)
		}
	}
	for _, d := range []string{"5c739215f111308511e229006535d1ae", "0454894049fddf30", "call:tool-7", "f1", "5C739215F111308511E229006535D1AE", "abc"} {
		assert.Equal(t, d, unpackHex(packHex(d)), "%q", d)
	}
	assert.Len(t, packHex("5c739215f111308511e229006535d1ae"), 17)
}
