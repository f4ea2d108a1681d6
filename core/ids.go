package core

import (
	"crypto/rand"
	"hash/fnv"

	"github.com/google/uuid"
)

// NewQuestionID returns a new question id: a UUID (RFC 9562 version 8)
// whose first 32 bits are ProjectHash(project) and whose other 90 free bits
// are random. A store can then find a question's project from its id alone
// (Store.Locate) without keeping an id→project index.
func NewQuestionID(project string) string {
	var u uuid.UUID
	if _, err := rand.Read(u[:]); err != nil {
		return uuid.NewString() // crypto/rand does not fail on supported platforms
	}
	h := ProjectHash(project)
	u[0], u[1], u[2], u[3] = byte(h>>24), byte(h>>16), byte(h>>8), byte(h)
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return u.String()
}

// ProjectHint returns the project hash carried by an id made by
// NewQuestionID; ok is false for any other id (e.g. a version 4 UUID from
// an older release). The hint may be shared by several projects.
func ProjectHint(id string) (hash uint32, ok bool) {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 8 || u.Variant() != uuid.RFC4122 {
		return 0, false
	}
	return uint32(u[0])<<24 | uint32(u[1])<<16 | uint32(u[2])<<8 | uint32(u[3]), true
}

// ProjectHash is the 32-bit FNV-1a hash of a project id.
func ProjectHash(project string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(project))
	return h.Sum32()
}
