package memlimit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheContainersLimitIsFound: the memory limit of the process's cgroup
// (v2, v1, its own group or the namespace's root); no limit reads as 0.
func TestTheContainersLimitIsFound(t *testing.T) {
	for name, c := range map[string]struct {
		files map[string]string
		want  int64
		from  string
	}{
		"v2, own group": {map[string]string{"proc/self/cgroup": "0::/kubepods/pod1\n",
			"sys/fs/cgroup/kubepods/pod1/memory.max": "629145600\n"}, 629145600, "/sys/fs/cgroup/kubepods/pod1/memory.max"},
		"v2, namespace root": {map[string]string{"proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "536870912\n"}, 536870912, "/sys/fs/cgroup/memory.max"},
		"v2, no limit": {map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "max\n"}, 0, ""},
		"v1": {map[string]string{"proc/self/cgroup": "8:cpu,cpuacct:/docker/a\n7:memory:/docker/a\n",
			"sys/fs/cgroup/memory/docker/a/memory.limit_in_bytes": "1073741824\n"}, 1073741824, "/sys/fs/cgroup/memory/docker/a/memory.limit_in_bytes"},
		"v1, no limit": {map[string]string{"proc/self/cgroup": "7:memory:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, ""},
		"no cgroup": {map[string]string{}, 0, ""},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, body := range c.files {
				require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(body), 0o644))
			}
			got, from := cgroupLimit(root)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.from, from)
		})
	}
}

// TestAnOperatorsGOMEMLIMITIsKept: with GOMEMLIMIT set, the runtime's own
// reading of it stands.
func TestAnOperatorsGOMEMLIMITIsKept(t *testing.T) {
	limit, from := Apply(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	})
	assert.Zero(t, limit)
	assert.Empty(t, from)
}
