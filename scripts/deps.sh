#!/usr/bin/env bash
# Installs what `make test` needs when it is missing: redis-server (store
# conformance, replica tests; Sentinel runs as `redis-server --sentinel`),
# redis-tools (redis-cli: Cluster creation, latency floor) and chromium (the web inbox's browser tests,
# driven headless from Go), and from npm the MCP TypeScript SDK and the MCP conformance
# suite (the MCP server's outside client and checker) and adaptivecards (the Teams
# cards' parser). Uses apt-get (as root, or through sudo).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# redis-cli builds the test Cluster and measures the latency floor in make bench.
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
  && ! command -v google-chrome >/dev/null 2>&1; then
  need+=(chromium)
fi

# The official MCP TypeScript SDK: an outside MCP client for the MCP server's
# tests (agent/mcpserver), installed into a cache directory outside the
# repository. Without npm the tests skip, except in CI where they fail.
npm_dir="${ASKBRIDGE_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge/npm}"
mcp_sdk_version="1.32.2"
install_mcp_sdk() {
  if ! command -v npm >/dev/null 2>&1; then
    if [ -n "${CI:-}" ]; then echo "npm is required in CI (MCP client tests)" >&2; exit 1; fi
    echo "npm not found: the MCP TypeScript client tests will be skipped" >&2
    return 0
  fi
  if grep -qs "\"version\": \"$mcp_sdk_version\"" "$npm_dir/node_modules/@modelcontextprotocol/sdk/package.json"; then
    return 0
  fi
  echo "installing @modelcontextprotocol/sdk@$mcp_sdk_version into $npm_dir" >&2
  mkdir -p "$npm_dir"
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$mcp_sdk_version" >/dev/null)
}
install_mcp_sdk

# The official MCP conformance suite, run against /mcp by the MCP server's
# tests (TestConformanceSuite), in a directory of its own (it brings its own
# SDK). The newest release: the 0.2 alphas are the first with the tasks
# extension's and the 2026-07-28 scenarios. It runs on Node 22, installed
# below by clients-deps.sh.
conformance_dir="${ASKBRIDGE_CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge/conformance}"
conformance_version="0.2.0-alpha.12"
install_conformance() {
  command -v npm >/dev/null 2>&1 || return 0 # said above; CI has failed already
  if grep -qs "\"version\": \"$conformance_version\"" "$conformance_dir/node_modules/@modelcontextprotocol/conformance/package.json"; then
    return 0
  fi
  echo "installing @modelcontextprotocol/conformance@$conformance_version into $conformance_dir" >&2
  mkdir -p "$conformance_dir"
  [ -f "$conformance_dir/package.json" ] || echo '{"private": true}' >"$conformance_dir/package.json"
  (cd "$conformance_dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "@modelcontextprotocol/conformance@$conformance_version" >/dev/null)
}
install_conformance

# The adaptivecards package, the Adaptive Card renderer's own parser: the
# Teams adapter's tests parse every card it renders with it (adapters/teams),
# into the same cache directory. Without npm the test skips, except in CI.
adaptivecards_version="3.0.6"
install_adaptivecards() {
  command -v npm >/dev/null 2>&1 || return 0 # said above
  if grep -qs "\"version\": \"$adaptivecards_version\"" "$npm_dir/node_modules/adaptivecards/package.json"; then
    return 0
  fi
  echo "installing adaptivecards@$adaptivecards_version into $npm_dir" >&2
  mkdir -p "$npm_dir"
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error "adaptivecards@$adaptivecards_version" >/dev/null)
}
install_adaptivecards

# The TypeScript and Python clients' tests (clients/): Node 22, TypeScript and
# the frameworks from npm, python3-httpx/pytest/fastapi from apt-get.
"$(dirname "$0")/clients-deps.sh"

# Mailpit, a real mail server, for the email surface's end-to-end test
# (adapters/email): built once from the Go module proxy into a cache.
bash "$(dirname "$0")/mailpit.sh" >/dev/null

[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
