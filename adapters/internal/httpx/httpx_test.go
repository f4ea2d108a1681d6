package httpx

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Waves of concurrent calls reuse the connections of the first wave.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond) // keep the wave's calls in flight together
		io.WriteString(w, `{"ok":true}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		transport http.RoundTripper
		reuses    bool
	}{{"default transport", http.DefaultTransport.(*http.Transport).Clone(), false}, {"Transport()", Transport(), true}} {
		opened.Store(0)
		c := &http.Client{Transport: tc.transport}
		const wave = 32
		for range 5 {
			var wg sync.WaitGroup
			for range wave {
				wg.Go(func() {
					res, err := c.Get(srv.URL)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				})
			}
			wg.Wait()
		}
		n := opened.Load()
		if tc.reuses && n > wave {
			t.Errorf("%s: 5 waves of %d calls opened %d connections; want at most %d", tc.name, wave, n, wave)
		}
		if !tc.reuses && n <= wave {
			t.Errorf("%s opened only %d connections: the test no longer shows the difference", tc.name, n)
		}
		t.Logf("%s: %d connections for 5 waves of %d calls", tc.name, n, wave)
		c.CloseIdleConnections()
	}
}
