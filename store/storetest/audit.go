package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testAudit: the audit trail names who did what to which question, oldest
// first; the scripts write the asking and the answer in the same step; a
// question's trail is found behind more than a page (1000) of other
// entries; limit keeps the oldest entries.
func testAudit(t *testing.T, open func() lifecycle.Store) {
	s := open()
	p := project()
	q := newQ(p, "run-1")
	create(t, s, q)
	_, err := s.Transition(ctx, p, q.ID, answer("alice"))
	require.NoError(t, err)

	at := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 1005 {
		require.NoError(t, s.AppendAudit(ctx, domain.AuditEntry{Type: "noise", ProjectID: p, QuestionID: fmt.Sprintf("other-%d", i), At: at}))
	}
	bob := &domain.Person{Platform: "slack", ID: "U2", Name: "Bob"}
	require.NoError(t, s.AppendAudit(ctx, domain.AuditEntry{Type: "copy_failed", ProjectID: p, QuestionID: q.ID,
		RunID: "run-1", By: bob, Detail: "channel archived", At: at}))

	trail, err := s.Audit(ctx, p, q.ID, 0)
	require.NoError(t, err)
	var types []string
	for _, e := range trail {
		types = append(types, e.Type)
		assert.Equal(t, q.ID, e.QuestionID, "only the question's entries")
		assert.Equal(t, p, e.ProjectID)
	}
	require.Equal(t, []string{"asked", "answered", "copy_failed"}, types, "oldest first, the one behind a page of others too")
	require.NotNil(t, trail[1].By)
	assert.Equal(t, "alice", trail[1].By.ID, "the answer names who gave it")
	last := trail[2]
	assert.Equal(t, bob, last.By)
	assert.Equal(t, "run-1", last.RunID)
	assert.Equal(t, "channel archived", last.Detail)
	assert.True(t, at.Equal(last.At), "at %s, want %s", last.At, at)
	assert.NotEmpty(t, last.ID)

	first, err := s.Audit(ctx, p, q.ID, 1)
	require.NoError(t, err)
	require.Len(t, first, 1)
	assert.Equal(t, "asked", first[0].Type, "limit keeps the oldest")
	all, err := s.Audit(ctx, p, "", 0)
	require.NoError(t, err)
	assert.Len(t, all, 1000, "without a question, the default limit (1000) bounds the trail")
}
