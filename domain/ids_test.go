package domain

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuestionIDsCarryTheirProjectHint(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range []string{"ops", "default", "a-much-longer-project-name", ""} {
		for range 100 {
			id := NewQuestionID(p)
			u, err := uuid.Parse(id)
			require.NoError(t, err, "a question id is a UUID")
			assert.Equal(t, uuid.Version(8), u.Version())
			assert.Equal(t, uuid.RFC4122, u.Variant())
			h, ok := ProjectHint(id)
			require.True(t, ok)
			assert.Equal(t, ProjectHash(p), h)
			assert.False(t, seen[id], "ids are unique")
			seen[id] = true
		}
	}
	assert.NotEqual(t, ProjectHash("ops"), ProjectHash("dev"))
}

func TestOtherIDsCarryNoHint(t *testing.T) {
	for _, id := range []string{uuid.NewString(), "not-a-uuid", "", "00000000-0000-0000-0000-000000000000"} {
		_, ok := ProjectHint(id)
		assert.False(t, ok, id)
	}
}

// The short ids people see of one project's questions differ: they used
// to be the project's hash, the same for every question ("aefd3536…").
func TestShortIDsOfAProjectAreDistinct(t *testing.T) {
	short := map[string]bool{}
	for range 200 {
		id := NewQuestionID("demo")
		s := ShortID(id)
		assert.Len(t, s, ShortLen)
		assert.True(t, strings.HasPrefix(id, s), "the short id starts the id, as people expect")
		assert.True(t, strings.HasPrefix(id, id[:8]))
		short[s] = true
		assert.True(t, IDHasPrefix(id, strings.ToUpper(s[:5])))
		assert.True(t, IDHasPrefix(id, id[:13]), "with the dash")
		assert.False(t, IDHasPrefix(id, ""))
	}
	assert.Greater(t, len(short), 195, "short ids of one project are distinct")
}

// Ids of the earlier layout (project hash first) are still located by
// their hint, and shown by their random part.
func TestLayout1IDsStillReadable(t *testing.T) {
	for range 100 {
		u := uuid.New()
		h := ProjectHash("demo")
		u[0], u[1], u[2], u[3] = byte(h>>24), byte(h>>16), byte(h>>8), byte(h)
		u[6] = u[6]&0x0f | 0x80
		u[8] = u[8]&0x3f | 0x80
		if u[8] == layoutMark {
			continue // one in 64 reads as layout 2; the store then looks further
		}
		id := u.String()
		got, ok := ProjectHint(id)
		require.True(t, ok)
		assert.Equal(t, h, got)
		s := ShortID(id)
		assert.Equal(t, strings.ReplaceAll(id, "-", "")[8:16], s)
		assert.True(t, IDHasPrefix(id, s[:6]))
		assert.True(t, IDHasPrefix(id, id[:10]))
	}
}
