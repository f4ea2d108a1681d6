package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
)

// TestDurabilityRealRedis runs the durability part of the suite on a real
// Redis: a failed commit is a write refused at the script's first write
// (maxmemory reached, noeviction), a held commit a script paused by CLIENT
// PAUSE WRITE while reads go on.
func TestDurabilityRealRedis(t *testing.T) {
	storetest.RunDurability(t, func(t *testing.T) storetest.Faults {
		srv := storetest.Redis(t)
		cli := func(args ...string) {
			t.Helper()
			if out, err := srv.Cli(args...); err != nil {
				t.Fatalf("redis-cli %v: %v %s", args, err, out)
			}
		}
		return storetest.Faults{Store: open(t, srv.URL),
			Fail: func(t *testing.T) func() {
				cli("CONFIG", "SET", "maxmemory-policy", "noeviction")
				cli("CONFIG", "SET", "maxmemory", "1")
				return func() { cli("CONFIG", "SET", "maxmemory", "0") }
			},
			Hold: func(t *testing.T) (<-chan struct{}, func()) {
				cli("CLIENT", "PAUSE", "20000", "WRITE")
				held := make(chan struct{})
				go func() {
					defer close(held)
					storetest.WaitFor(context.Background(), 5*time.Second, func() bool {
						out, _ := srv.Cli("CLIENT", "LIST")
						for _, l := range strings.Split(out, "\n") {
							if strings.Contains(l, "flags=b ") && strings.Contains(l, "cmd=evalsha") {
								return true
							}
						}
						return false
					})
				}()
				return held, func() { cli("CLIENT", "UNPAUSE") }
			}}
	})
}
