package admit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlacesAreGivenBackOnce: a full line makes the next request wait
// until a place is given back; giving the same place back twice frees one
// place, not two; a request whose client went away leaves the line.
func TestPlacesAreGivenBackOnce(t *testing.T) {
	l := New(2)
	r1, ok := l.Enter(t.Context())
	require.True(t, ok)
	_, ok = l.Enter(t.Context())
	require.True(t, ok)

	full := func(why string) {
		t.Helper()
		gone, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, ok := l.Enter(gone)
		assert.False(t, ok, why)
	}
	full("a third request entered a line of two")

	r1()
	r1() // twice: still one place
	_, ok = l.Enter(t.Context())
	require.True(t, ok)
	full("a place given back twice counted as two")
}

// TestHandlerHandsThePlaceToTheRequest: a request the line takes finds its
// release in its context, and a handler that gives it back before it
// blocks lets the next request in; a request it does not take passes.
func TestHandlerHandsThePlaceToTheRequest(t *testing.T) {
	l := New(1)
	block := make(chan struct{})
	h := l.Handler(func(r *http.Request) bool { return r.Method == http.MethodPost },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/wait" {
				Of(r.Context())() // as a handler about to block
				<-block
			}
		}))
	serve := func(method, path string) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
			close(done)
		}()
		return done
	}
	within := func(done <-chan struct{}, failure string) {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal(failure)
		}
	}
	done := serve(http.MethodPost, "/wait")
	within(serve(http.MethodPost, "/other"), "the blocked request kept its place")
	// The line is full; a request it does not take is served all the same.
	held, ok := l.Enter(t.Context())
	require.True(t, ok)
	within(serve(http.MethodGet, "/other"), "a request the line does not take waited for a place")
	held()
	close(block)
	<-done
	assert.Len(t, l, 0, "places still held after every request ended")
}
