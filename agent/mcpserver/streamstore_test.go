package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events is what a stream resumed after index gets from s.
func events(t *testing.T, s *streamStore, session, stream string, index int) ([]string, error) {
	t.Helper()
	var got []string
	for data, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return got, err
		}
		got = append(got, string(data))
	}
	return got, nil
}

// call stores a call's stream as the SDK does: opened, its priming event,
// then its response ("" for none yet).
func call(t *testing.T, s *streamStore, session, stream, response string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Open(ctx, session, stream))
	require.NoError(t, s.Append(ctx, session, stream, nil))
	if response != "" {
		require.NoError(t, s.Append(ctx, session, stream, []byte(response)))
	}
}

func TestStreamStoreKeepsWhatAHostMayResume(t *testing.T) {
	ctx := context.Background()
	s := newStreamStore()
	require.NoError(t, s.Open(ctx, "s1", "")) // the standalone stream: never stored
	call(t, s, "s1", "init", `{"id":1,"result":"initialized"}`)
	got, err := events(t, s, "s1", "init", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"id":1,"result":"initialized"}`}, got, "a host that lost initialize's result resumes it")

	call(t, s, "s1", "ask", "") // the ask_user call, parked
	_, err = events(t, s, "s1", "init", 0)
	require.ErrorIs(t, err, errStreamDropped, "initialize's stream outlived the host's next request")
	got, err = events(t, s, "s1", "ask", 0)
	require.NoError(t, err)
	assert.Empty(t, got)

	for _, id := range []string{"a", "b", "c", "d", "e"} {
		call(t, s, "s1", id, `{"result":"`+id+`"}`)
	}
	_, err = events(t, s, "s1", "a", 0)
	require.ErrorIs(t, err, errStreamDropped, "more than maxStreams kept")
	_, err = events(t, s, "s1", "ask", 0)
	require.NoError(t, err, "a running call's stream was dropped")
	require.NoError(t, s.Append(ctx, "s1", "ask", []byte(`{"result":"answered"}`)))
	got, err = events(t, s, "s1", "ask", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"result":"answered"}`}, got)
	got, err = events(t, s, "s1", "e", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{`{"result":"e"}`}, got)
	got, err = events(t, s, "s1", "e", 1)
	require.NoError(t, err)
	assert.Empty(t, got, "after its last event")

	for _, probe := range []struct{ session, stream string }{{"s2", "e"}, {"s1", "zz"}, {"", ""}} {
		_, err = events(t, s, probe.session, probe.stream, 0)
		assert.Error(t, err, "%+v", probe)
	}
	got, err = events(t, s, "s1", "", 3)
	require.NoError(t, err)
	assert.Empty(t, got, "the standalone stream")

	require.NoError(t, s.SessionClosed(ctx, "s1"))
	_, err = events(t, s, "s1", "e", 0)
	require.Error(t, err)
	assert.Zero(t, s.bytes)
	assert.Empty(t, s.sessions)
}

func TestStreamStoreStaysUnderItsBytes(t *testing.T) {
	ctx := context.Background()
	s := newStreamStore()
	s.maxBytes = 100
	big := strings.Repeat("x", 40)
	call(t, s, "s1", "one", big)
	call(t, s, "s2", "two", big)
	call(t, s, "s3", "three", big) // 120 bytes: the oldest events go
	assert.LessOrEqual(t, s.bytes, 100)
	_, err := events(t, s, "s1", "one", 0)
	require.ErrorIs(t, err, errStreamDropped, "a purged event is not skipped silently")
	got, err := events(t, s, "s3", "three", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{big}, got)
	require.NoError(t, s.Append(ctx, "s3", "three", []byte(strings.Repeat("y", 500))))
	assert.Equal(t, 500, s.bytes, "an event bigger than the store is kept alone")
}
