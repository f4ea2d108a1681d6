package native_test

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
)

// faults fails or holds the store's commits through Options.CommitHook.
type faults struct {
	mu      sync.Mutex
	err     error
	hold    chan struct{} // closed to release
	held    chan struct{} // closed once a commit waits
	heldOne sync.Once
}

func (f *faults) hook() error {
	f.mu.Lock()
	hold, held, once := f.hold, f.held, &f.heldOne
	f.mu.Unlock()
	if hold != nil {
		once.Do(func() { close(held) })
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// fail makes commits fail with ENOSPC, as on a full disk, until heal.
func (f *faults) fail(dir string) func(*testing.T) func() {
	return func(*testing.T) func() {
		f.mu.Lock()
		f.err = &os.PathError{Op: "write", Path: filepath.Join(dir, native.FileName), Err: syscall.ENOSPC}
		f.mu.Unlock()
		return func() {
			f.mu.Lock()
			f.err = nil
			f.mu.Unlock()
		}
	}
}

func (f *faults) holdCommits(*testing.T) (<-chan struct{}, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold, f.held, f.heldOne = make(chan struct{}), make(chan struct{}), sync.Once{}
	held, hold := f.held, f.hold
	return held, func() {
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		close(hold)
	}
}

func TestDurabilityConformance(t *testing.T) {
	storetest.RunDurability(t, func(t *testing.T) storetest.Faults {
		f := &faults{}
		dir := t.TempDir()
		s := open(t, native.Options{Dir: dir, CommitHook: f.hook})
		return storetest.Faults{Store: s, Fail: f.fail(dir), Hold: f.holdCommits}
	})
}
