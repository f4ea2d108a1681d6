#!/usr/bin/env bash
# Installs what `make test` needs when it is missing: redis-server (store
# conformance, replica tests; Sentinel runs as `redis-server --sentinel`),
# redis-tools (redis-cli: Cluster creation, latency floor) and chromium (the web inbox's browser tests,
# driven headless from Go). Uses apt-get (as root, or through sudo).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# redis-cli builds the test Cluster and measures the latency floor in make bench.
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
  && ! command -v google-chrome >/dev/null 2>&1; then
  need+=(chromium)
fi
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
