package core

import (
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
