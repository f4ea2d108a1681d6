package api_test

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileBodiesCannotTakeTheProcessDown: a megabyte of unclosed "[[[["
// (or "{"a":" repeated) used to make the shape checker recurse without
// limit, 291 → 686 MiB per request. Every such body is refused with 400
// naming the limit, each costs a bounded amount of memory, and a burst of
// them in parallel leaves the heap where it started.
func TestHostileBodiesCannotTakeTheProcessDown(t *testing.T) {
	b := newBridge(t, opts{})
	bodies := map[string]string{
		"arrays":          strings.Repeat("[", 1<<20-64),
		"objects":         strings.Repeat(`{"a":`, (1<<20-64)/5),
		"deep in a field": `{"question":"q","context":` + strings.Repeat("[", 100) + `"x"` + strings.Repeat("]", 100) + `}`,
	}
	for name, body := range bodies {
		r := b.do("POST", "/api/projects/p/agent-questions", "", body)
		assert.Equal(t, 400, r.status, name)
		assert.Contains(t, string(r.raw), "deeper than 64 levels", name)
	}
	// Deep but within the limit: the usual answer about the field.
	r := b.do("POST", "/api/projects/p/agent-questions", "", `{"question":"q","context":`+strings.Repeat("[", 20)+strings.Repeat("]", 20)+`}`)
	assert.Equal(t, 400, r.status)
	assert.Contains(t, string(r.raw), "context")

	heap := func() uint64 {
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	var alloc0, alloc1 runtime.MemStats
	runtime.ReadMemStats(&alloc0)
	const rounds, parallel = 5, 3
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				r := b.do("POST", "/api/projects/p/agent-questions", "", bodies["arrays"])
				if r.status != 400 {
					t.Errorf("status %d", r.status)
				}
			}
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&alloc1)
	after := heap()
	perRequest := (alloc1.TotalAlloc - alloc0.TotalAlloc) / (rounds * parallel)
	t.Logf("allocated per hostile request: %.1f MiB; heap in use %0.1f → %0.1f MiB", float64(perRequest)/(1<<20), float64(before)/(1<<20), float64(after)/(1<<20))
	require.Less(t, perRequest, uint64(16<<20), "one hostile request allocates at most a few times its size (client and server both count here)")
	assert.Less(t, int64(after)-int64(before), int64(4<<20), "the heap is back within a few MB of where it started")
}
