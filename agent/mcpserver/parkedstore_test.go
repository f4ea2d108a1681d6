package mcpserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replay is what a stream resumed after its event index gets from p.
func replay(t *testing.T, p *parkedStore, session, stream string, index int) (events []string, err error) {
	t.Helper()
	for data, e := range p.After(context.Background(), session, stream, index) {
		if e != nil {
			return events, e
		}
		events = append(events, string(data))
	}
	return events, nil
}

func TestParkedStoreKeepsAParkedCallsResultInItsPlace(t *testing.T) {
	ctx := context.Background()
	p := &parkedStore{EventStore: newStreamStore(), closed: func(string) {}}
	require.NoError(t, p.Append(ctx, "s1", "7", nil)) // the priming event
	require.NoError(t, p.Append(ctx, "s1", "7", []byte(`{"result":{"_meta":{"`+parkedMarker+`":true}}}`)))
	got, err := replay(t, p, "s1", "7", 0)
	require.NoError(t, err)
	assert.Empty(t, got, "the placeholder is never replayed")

	p.keepFinal("s1", "7", []byte(`{"result":"answered"}`))
	got, err = replay(t, p, "s1", "7", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"result":"answered"}`}, got, "a resumed stream gets the result")

	p.keepFinal("s1", "8", []byte(`{"result":"other"}`))
	_, err = replay(t, p, "s1", "8", 0)
	assert.Error(t, err, "a stream the store never had is not made")

	require.NoError(t, p.SessionClosed(ctx, "s1"))
	p.keepFinal("s1", "7", []byte(`{"result":"late"}`))
	_, err = replay(t, p, "s1", "7", 0)
	assert.Error(t, err, "a closed session's streams are not brought back")
}
