package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/askbridge/askbridge/agent/internal/fakeapi"
	"github.com/stretchr/testify/require"
)

// TestSDKDecodesWithoutAReadBuffer: the MCP SDK askbridge builds with
// (third_party/go-sdk, PATCHES.md) unmarshals a request's bytes in place.
// v1.8.0 as published decoded each one through a streaming Decoder that
// first allocates a 32 KB read buffer: a 2026-07-28 tools/list allocated
// ~400 KB in this process and a blocking ask_user call ~470 KB, garbage a
// burst of calls piled up by the gigabyte. This fails if the SDK goes back
// to that (the patch dropped, say, when the SDK is updated).
func TestSDKDecodesWithoutAReadBuffer(t *testing.T) {
	endpoint := remoteMCP(t, fakeapi.New(t, ""))
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/list",
		"params": map[string]any{"_meta": meta2026()}})
	list := func() {
		req, err := http.NewRequestWithContext(t.Context(), "POST", endpoint, bytes.NewReader(body))
		require.NoError(t, err)
		header2026(req, "tools/list", "")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, 200, res.StatusCode, "%s", got)
		require.Contains(t, string(got), `"ask_user"`)
	}
	for range 5 { // warm: what every request shares
		list()
	}
	const n = 40
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range n {
		list()
	}
	runtime.ReadMemStats(&m1)
	per := float64(m1.TotalAlloc-m0.TotalAlloc) / n
	t.Logf("a 2026-07-28 tools/list allocates %.0f B in this process (client and server)", per)
	if per > 250<<10 { // (~150 KB under -race)
		t.Errorf("a 2026-07-28 tools/list allocates %.0f KB; want under 250 KB (the SDK's Decoder read buffers are back?)", per/1024)
	}
}
