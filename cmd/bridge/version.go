package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at link time by `make build`:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=<sha>" ./cmd/bridge
//
// Without them the module version and VCS revision stamped by the Go
// toolchain are used, when there are any.
var (
	version string
	commit  string
)

// buildInfo is what `askbridge version` prints.
type buildInfo struct {
	Version, Commit, Time, Go string
	Modified                  bool
}

// readBuildInfo combines the link-time values with the toolchain's build
// information (info may be nil).
func readBuildInfo(info *debug.BuildInfo, linkVersion, linkCommit string) buildInfo {
	b := buildInfo{Version: linkVersion, Commit: linkCommit, Go: runtime.Version()}
	if info != nil {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			b.Go = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func (b buildInfo) write(w io.Writer) {
	fmt.Fprintf(w, "askbridge %s\n", b.Version)
	c := b.Commit
	if b.Modified {
		c += " (modified)"
	}
	fmt.Fprintf(w, "commit: %s\n", c)
	if b.Time != "" {
		fmt.Fprintf(w, "commit time: %s\n", b.Time)
	}
	fmt.Fprintf(w, "go: %s %s/%s\n", b.Go, runtime.GOOS, runtime.GOARCH)
}

// buildVersion is the version `askbridge version` prints, for MCP clients.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return readBuildInfo(info, version, commit).Version
}

func printVersion(w io.Writer) {
	info, _ := debug.ReadBuildInfo()
	readBuildInfo(info, version, commit).write(w)
}
