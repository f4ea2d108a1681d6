package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
	"github.com/askbridge/askbridge/store/storetest"
)

// The scale benchmark's stores, and its asks: (c) (scale.go runs them).

// scaleStore sets up a store of the kind name in d: the bridge's
// environment for it, a way to open it from the bench (to fill it while
// the bridge is stopped) and, on Redis, its redis-server.
func scaleStore(ctx context.Context, d, name string) ([]string, func() (lifecycle.Store, func(), error), *storetest.Server, error) {
	if err := os.MkdirAll(d, 0o700); err != nil {
		return nil, nil, nil, err
	}
	switch name {
	case "embedded":
		data := filepath.Join(d, "data")
		return []string{"BRIDGE_DATA_DIR=" + data}, func() (lifecycle.Store, func(), error) {
			st, err := native.Open(native.Options{Dir: data})
			if err != nil {
				return nil, nil, err
			}
			return st, func() { st.Close() }, nil
		}, nil, nil
	case "redis":
		rs, err := storetest.StartServer(d)
		if err != nil {
			return nil, nil, nil, err
		}
		return []string{"REDIS_URL=" + rs.URL}, func() (lifecycle.Store, func(), error) {
			st, err := store.Open(ctx, store.Options{URL: rs.URL})
			if err != nil {
				return nil, nil, err
			}
			return st, func() { st.Close() }, nil
		}, rs, nil
	}
	return nil, nil, nil, fmt.Errorf("no store %q (-scale-stores: embedded, redis)", name)
}

// asksAt1k is a turn of (c) at 1,000 records: asks/s on a bridge of its
// own on a fresh store of the kind holding 1,000 pending questions (a data
// directory or a redis-server of its own, removed after), as the first
// 1,000 point was measured.
func asksAt1k(ctx context.Context, bin, d, name string, o opts) (float64, error) {
	defer os.RemoveAll(d)
	env, open, rs, err := scaleStore(ctx, d, name)
	if err != nil {
		return 0, err
	}
	if rs != nil {
		defer rs.Kill()
	}
	st, closeSt, err := open()
	if err != nil {
		return 0, err
	}
	_, err = preloadIDs(ctx, st, "scale", 0, 1000)
	closeSt()
	if err != nil {
		return 0, err
	}
	p, _, err := startBridge(bin, append(env, o.bridgeEnv...))
	if err != nil {
		return 0, err
	}
	defer p.stop()
	asks, _, failed := scaleAsks(p.base, "asks", 32, time.Duration(o.scaleSecs)*time.Second)
	if failed > 0 {
		return 0, fmt.Errorf("%d asks failed at 1,000 records", failed)
	}
	return asks, nil
}

// scaleTurns is how many times (c) measures each point.
const scaleTurns = 3

// median of v (not empty), the lower middle for an even count.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// joinRates lists asks/s figures.
func joinRates(v []float64) string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(out, ", ")
}

// scaleAsks: clients ask for d (no target: the inbox shows them).
func scaleAsks(base, project string, clients int, d time.Duration) (float64, lat, int64) {
	return askLoadURL(base, project, clients, d, nil)
}
