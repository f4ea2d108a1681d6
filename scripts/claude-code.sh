#!/usr/bin/env bash
# make test-claude-code: runs the real Claude Code CLI offline (a fake
# Messages API on loopback, ANTHROPIC_BASE_URL) with askbridge's hook
# configured as in docs/agents.md, and checks an AskUserQuestion answered
# through the bridge reaches the tool result. Opt-in, not part of make test:
# installs @anthropic-ai/claude-code from npm into a cache directory once
# (the package ships a native binary; about 380 MB).
#
#   CLAUDE_CODE_VERSION  the version to test (default below)
#   ASKBRIDGE_CACHE      where to keep it (default ~/.cache/askbridge)
set -euo pipefail
version="${CLAUDE_CODE_VERSION:-2.1.330}"
cache="${ASKBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/askbridge}/claude-code/$version"
GO="${GO:-go}"

if ! command -v npm >/dev/null 2>&1; then
  echo "test-claude-code: skipped: npm is not installed (it installs @anthropic-ai/claude-code)" >&2
  exit 0
fi

find_bin() {
  local b
  for b in "$cache"/node_modules/@anthropic-ai/claude-code-*/claude \
           "$cache"/node_modules/@anthropic-ai/claude-code/bin/claude.exe; do
    if [ -x "$b" ] && "$b" --version >/dev/null 2>&1; then
      echo "$b"
      return 0
    fi
  done
  return 1
}

if ! bin="$(find_bin)"; then
  echo "test-claude-code: installing @anthropic-ai/claude-code@$version into $cache" >&2
  mkdir -p "$cache"
  npm install --silent --no-audit --no-fund --prefix "$cache" "@anthropic-ai/claude-code@$version" >&2
  if ! bin="$(find_bin)"; then
    echo "test-claude-code: no runnable claude binary for this platform in $cache" >&2
    exit 1
  fi
fi
echo "test-claude-code: $("$bin" --version)" >&2
ASKBRIDGE_CLAUDE_CODE="$bin" "$GO" test -race -count=1 -timeout 10m -run '^TestRealClaudeCode' -v ./agent/hook
