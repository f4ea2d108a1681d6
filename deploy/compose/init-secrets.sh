#!/bin/sh
# Creates the random secrets deploy/compose reads (once; existing files are kept).
# The bridge runs as uid 65532, so the files are made readable by it.
set -eu
cd "$(dirname "$0")"
mkdir -p secrets
for name in webhook-secret web-session-key operator-token deploy-bot-token; do
  [ -s "secrets/$name" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "secrets/$name"
done
if [ "$(id -u)" -eq 0 ]; then
  chown 65532:65532 secrets/* && chmod 400 secrets/*
else
  chmod 644 secrets/*   # readable by the container's uid; keep the directory private
  chmod 700 secrets
fi
echo "secrets created in $(pwd)/secrets (the operator token: secrets/operator-token)"
