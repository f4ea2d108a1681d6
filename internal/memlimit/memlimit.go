// Package memlimit sizes the Go runtime's garbage collection to the memory
// the bridge's container may use: without a limit the runtime lets the
// heap grow to twice what is live between collections (GOGC=100), and a
// replica holding a hundred thousand parked waits can be killed by its
// container's memory limit while half its heap is garbage.
package memlimit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction of the container's limit given to the Go runtime: the rest is
// for what the runtime does not count (the binary, thread stacks, the
// embedded store's mapped file).
const Fraction = 0.9

// Apply sets the runtime's soft memory limit to Fraction of the cgroup's
// memory limit when GOMEMLIMIT is not set and the process runs under one.
// It returns the limit it set (0: none) and what it came from.
func Apply(getenv func(string) string) (limit int64, from string) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, "" // the operator's own, applied by the runtime
	}
	max, from := cgroupLimit("/")
	if max <= 0 {
		return 0, ""
	}
	limit = int64(float64(max) * Fraction)
	debug.SetMemoryLimit(limit)
	return limit, from
}

// unlimited is what cgroup v1 reports for no limit (page-rounded MaxInt64);
// anything above it, or above 1 PiB, is no limit either.
const unlimited = 1 << 50

// cgroupLimit is the memory limit of the process's cgroup under root, in
// bytes (0: none): cgroup v2's memory.max of its own group or the
// namespace's root, else v1's memory.limit_in_bytes.
func cgroupLimit(root string) (int64, string) {
	var candidates []string
	if b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			// v2: "0::/path"; v1: "7:memory:/path"
			parts := strings.SplitN(l, ":", 3)
			if len(parts) != 3 {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				candidates = append(candidates, filepath.Join(root, "sys/fs/cgroup", parts[2], "memory.max"))
			case strings.Contains(","+parts[1]+",", ",memory,"):
				candidates = append(candidates, filepath.Join(root, "sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			}
		}
	}
	candidates = append(candidates, filepath.Join(root, "sys/fs/cgroup/memory.max"), filepath.Join(root, "sys/fs/cgroup/memory/memory.limit_in_bytes"))
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, ""
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= unlimited {
			return 0, ""
		}
		return n, strings.TrimPrefix(p, filepath.Clean(root))
	}
	return 0, ""
}

// String is a limit in MiB for the log.
func String(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
