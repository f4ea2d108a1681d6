package store

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// embedded is the in-process Redis-compatible server of the default mode.
// It runs the same scripts as real Redis; everything is lost on restart.
type embedded struct{ m *miniredis.Miniredis }

func startEmbedded() (*embedded, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true) // TTLs follow the real clock, as on a real server
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("store: starting the embedded store: %w", err)
	}
	return &embedded{m: m}, nil
}

func (e *embedded) addr() string { return e.m.Addr() }
func (e *embedded) close()       { e.m.Close() }

func redisChannelSize() redis.ChannelOption { return redis.WithChannelSize(1000) }
