package api_test

import (
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoutesNamesTheConfiguredRoutes: a client configured with a route can
// learn whether the bridge has it; the bridge of the README (no
// configuration file) has none.
func TestRoutesNamesTheConfiguredRoutes(t *testing.T) {
	b := newBridge(t, opts{})
	r := b.do("GET", "/api/projects/demo/routes", "", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.JSONEq(t, `{"routes": []}`, string(r.raw))

	b = newBridge(t, opts{routes: []domain.Route{{Name: "oncall", Default: true}, {Name: "eng"}}})
	r = b.do("GET", "/api/projects/demo/routes", "", nil)
	require.Equal(t, 200, r.status, string(r.raw))
	assert.JSONEq(t, `{"routes": [{"name": "eng", "default": false}, {"name": "oncall", "default": true}]}`, string(r.raw))
}
