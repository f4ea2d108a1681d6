#!/usr/bin/env bash
# layers.sh: the arrows between top-level folders, read from `go list`
# (non-test imports). Fails when two folders import each other, directly or
# through others, so the tree itself shows the layers.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
edges=$(go list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./... |
	awk -v m="$mod/" '{
		split(substr($1, length(m)+1), a, "/"); from=a[1]
		for (i = 2; i <= NF; i++) if (index($i, m) == 1) {
			split(substr($i, length(m)+1), b, "/"); if (b[1] != from) print from, b[1]
		}
	}' | sort -u)
echo "$edges" | awk '{printf "%s -> %s\n", $1, $2}'
# tsort reports a cycle on stderr.
if ! out=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
	echo "layers: the top-level folders import each other: $out" >&2
	exit 1
fi
echo "layers: no two top-level folders import each other"
