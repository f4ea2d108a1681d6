package native

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// pidFile, beside the database, names the process that holds the data
// directory's lock, so a second process refused the directory can say which
// one to stop. The lock itself is the database file's (bbolt's flock).
const pidFile = "askbridge.pid"

// writePID records this process as the holder; the caller holds the lock.
func writePID(dir string) {
	_ = os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

// removePID removes the record if it is this process's; the caller still
// holds the lock, so no other process has written it meanwhile.
func removePID(dir string) {
	if holderPID(dir) == os.Getpid() {
		_ = os.Remove(filepath.Join(dir, pidFile))
	}
}

// holderPID is the PID the holder of dir recorded, 0 when unknown (a
// holder that records none, or a file that says nothing sensible).
func holderPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
