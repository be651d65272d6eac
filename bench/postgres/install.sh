#!/usr/bin/env bash
# Installs both PostgreSQL clients the client bench compares into .bench-peers/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f ".bench-peers/node_modules/pg/package.json" ] || [ ! -f ".bench-peers/node_modules/postgres/package.json" ]; then
  npm install --prefix .bench-peers --no-save --no-audit --no-fund pg@8.23.1 @types/pg@8 postgres@3.4.9 >&2
fi
