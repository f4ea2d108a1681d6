package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askbridge/askbridge/store/storetest"
)

// processCPU is this process's user+system CPU time so far: client, bridge
// and fakes together. Unlike the wall clock, what the machine's other work
// takes hardly moves it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pidCPU is a process's user+system CPU time so far (/proc/<pid>/stat,
// in clock ticks of 10 ms); 0 if it cannot be read.
func pidCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's ")" : state is the 1st, utime the
	// 12th, stime the 13th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// redisCPU is the redis-server's user+system CPU time so far (INFO cpu).
func redisCPU(rs *storetest.Server) (time.Duration, error) {
	out, err := rs.Cli("info", "cpu")
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += time.Duration(f * float64(time.Second))
		}
	}
	return total, nil
}
