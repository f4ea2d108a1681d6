package domain

import (
	"crypto/rand"
	"hash/fnv"
	"strings"

	"github.com/google/uuid"
)

// Question ids are UUIDs (RFC 9562 version 8) that carry a hash of their
// project, so a store can find a question's project from its id alone
// (Store.Locate) without keeping an id→project index.
//
// Layout 2 (NewQuestionID): random bits first, so that every prefix people
// see ("Question 3f2a9c1b… sent", list and audit tables, the web inbox) is
// distinct; ProjectHash in the last 32 bits; byte 8 is layoutMark.
//
// Layout 1 (earlier releases): ProjectHash in the first 32 bits, random
// after. Such ids are still read: ProjectHint finds their hash, ShortID
// shows their random part.
const layoutMark = 0x80 | 0x2a // RFC 9562 variant bits 10, then 101010

// NewQuestionID returns a new question id for project (layout 2).
func NewQuestionID(project string) string {
	var u uuid.UUID
	if _, err := rand.Read(u[:]); err != nil {
		return uuid.NewString() // crypto/rand does not fail on supported platforms
	}
	h := ProjectHash(project)
	u[12], u[13], u[14], u[15] = byte(h>>24), byte(h>>16), byte(h>>8), byte(h)
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = layoutMark
	return u.String()
}

// ProjectHint returns the project hash carried by an id made by
// NewQuestionID (either layout); ok is false for any other id (e.g. a
// version 4 UUID from an older release). The hint may be shared by several
// projects, and one layout-1 id in 64 is read as layout 2: a store that
// finds nothing with the hint must look further.
func ProjectHint(id string) (hash uint32, ok bool) {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 8 || u.Variant() != uuid.RFC4122 {
		return 0, false
	}
	if u[8] == layoutMark {
		return uint32(u[12])<<24 | uint32(u[13])<<16 | uint32(u[14])<<8 | uint32(u[15]), true
	}
	return uint32(u[0])<<24 | uint32(u[1])<<16 | uint32(u[2])<<8 | uint32(u[3]), true
}

// ShortLen is the length of a short id.
const ShortLen = 8

// ShortID is the short form of a question id shown to people: its first 8
// hex digits, or for a layout-1 id, whose first digits are its project's
// hash and so the same for every question of a project, the 8 random hex
// digits after them. Any other id (a name a test chose) is returned whole
// when short.
func ShortID(id string) string {
	compact := strings.ReplaceAll(strings.ToLower(id), "-", "")
	if layout1(id) {
		return compact[8 : 8+ShortLen]
	}
	if len(compact) <= ShortLen {
		return id
	}
	return compact[:ShortLen]
}

// IDHasPrefix reports whether prefix (what a person typed: any case,
// dashes optional) starts id or its short form.
func IDHasPrefix(id, prefix string) bool {
	p := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(prefix)), "-", "")
	if p == "" {
		return false
	}
	compact := strings.ReplaceAll(strings.ToLower(id), "-", "")
	if strings.HasPrefix(compact, p) {
		return true
	}
	// A layout-1 id's short form is its random part (ShortID).
	return layout1(id) && strings.HasPrefix(compact[8:], p)
}

// layout1 reports whether id was made by an earlier release's
// NewQuestionID, with the project hash in front.
func layout1(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.Version() == 8 && u.Variant() == uuid.RFC4122 && u[8] != layoutMark
}

// ProjectHash is the 32-bit FNV-1a hash of a project id.
func ProjectHash(project string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(project))
	return h.Sum32()
}
