#!/usr/bin/env bash
# Installs Mailpit, a real mail server with an HTTP API, for the email
# surface's end-to-end test (adapters/email), into a cache directory
# outside the repository: built from the Go module proxy (about 3 minutes,
# once). Prints the binary's path. The test finds it there (or through
# $MAILPIT); without it the test skips, except in CI where it fails.
set -euo pipefail
version="v1.27.11"
dir="${ASKBRIDGE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge/tools}/mailpit-$version"
if [ -x "$dir/mailpit" ]; then
  echo "$dir/mailpit"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then echo "go is required to build mailpit in CI" >&2; exit 1; fi
  echo "go not found: the email end-to-end test will be skipped" >&2
  exit 0
fi
echo "building mailpit $version into $dir (once; about 3 minutes)" >&2
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local go install "github.com/axllent/mailpit@$version" >&2
echo "$dir/mailpit"
