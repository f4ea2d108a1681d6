// Package httpx holds what the chat adapters share about HTTP clients.
package httpx

import (
	"net/http"
	"time"
)

// MaxIdlePerHost is how many idle connections a platform client keeps to
// one host: enough for the questions and edits a replica sends at once.
// net/http's default keeps 2, so under load most calls to Slack or Discord
// would open (and TLS-handshake) a new connection.
const MaxIdlePerHost = 64

// Transport returns a transport like http.DefaultTransport that keeps up
// to MaxIdlePerHost idle connections per host.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * MaxIdlePerHost
	t.MaxIdleConnsPerHost = MaxIdlePerHost
	t.IdleConnTimeout = 90 * time.Second
	return t
}
