package main

import "runtime"

func runtimeCPU() int { return runtime.GOMAXPROCS(0) }
