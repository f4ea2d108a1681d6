//go:build heapprofile

package main

// Built only with -tags heapprofile (the scale bench, BRIDGE_HEAP_PROFILE):
// on SIGUSR1 the process collects its garbage and writes its heap profile
// to $BRIDGE_HEAP_PROFILE.N (N counting from 1), so what a kind of waiter
// keeps can be read from the bridge process itself rather than from a
// benchmark that shares its heap with the clients. Never in a release.

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

func init() {
	path := os.Getenv("BRIDGE_HEAP_PROFILE")
	if path == "" {
		return
	}
	// A sample every 4 KB rather than 512: a waiter keeps a few KB, and
	// a few thousand of them should name every site that keeps it.
	runtime.MemProfileRate = 4096
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		for n := 1; ; n++ {
			<-c
			runtime.GC()
			f, err := os.Create(fmt.Sprintf("%s.%d", path, n))
			if err != nil {
				fmt.Fprintln(os.Stderr, "heap profile:", err)
				continue
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, "heap profile:", err)
			}
			f.Close()
		}
	}()
}
