package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// ParseTimeout reads how long questions stay open (askbridge mcp --timeout,
// BRIDGE_TIMEOUT, ?timeout= on /mcp): a duration such as 30m or 48h, or
// seconds, bounded as the API's timeout. "" is 0: the bridge's default.
func ParseTimeout(s string) (time.Duration, error) {
	d, err := domain.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if s != "" && (d < domain.MinTimeout || d > domain.MaxTimeout) {
		return 0, fmt.Errorf("must be between 10s and 720h (30 days), got %s", strings.TrimSpace(s))
	}
	return d, nil
}
