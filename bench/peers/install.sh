#!/usr/bin/env bash
# Installs the peer we compare against into .bench-peers/ (ignored by git, never a dependency).
set -euo pipefail
cd "$(dirname "$0")/../.."
PI_VERSION="0.73.1"
if [ ! -f ".bench-peers/node_modules/@mariozechner/pi-coding-agent/package.json" ] || \
   ! grep -q "\"version\": \"$PI_VERSION\"" .bench-peers/node_modules/@mariozechner/pi-coding-agent/package.json; then
  npm install --prefix .bench-peers --no-save --no-audit --no-fund "@mariozechner/pi-coding-agent@$PI_VERSION" >&2
fi
