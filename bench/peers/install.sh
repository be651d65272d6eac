#!/usr/bin/env bash
# Installs the peers `npm run bench:peers` compares against into .bench-peers/ (ignored by git, never a
# dependency of the project): pi-coding-agent (Node) in .bench-peers/pi, oh-my-pi's coding agent and the
# Bun it runs on (the `bun` npm package ships the binary) in .bench-peers/omp. Versions must match bench/peers/paths.ts.
set -euo pipefail
cd "$(dirname "$0")/../.."
PI_VERSION="0.73.1"
OMP_VERSION="18.2.3"
BUN_VERSION="1.4.5"

# install <dir> <package@version>...: unless every package is already there at that version.
install() {
  local dir="$1"
  shift
  local missing=0
  for spec in "$@"; do
    local name="${spec%@*}" version="${spec##*@}"
    local manifest="$dir/node_modules/$name/package.json"
    if [ ! -f "$manifest" ] || [ "$(node -p "require('./$manifest').version")" != "$version" ]; then missing=1; fi
  done
  if [ "$missing" = 1 ]; then
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{ "private": true }' > "$dir/package.json"
    echo "installing $* into $dir" >&2
    npm install --prefix "$dir" --no-save --no-audit --no-fund "$@" >&2
  fi
}

install .bench-peers/pi "@mariozechner/pi-coding-agent@$PI_VERSION"
install .bench-peers/omp "@oh-my-pi/pi-coding-agent@$OMP_VERSION" "bun@$BUN_VERSION"
[ "$(.bench-peers/omp/node_modules/bun/bin/bun.exe --version)" = "$BUN_VERSION" ] || { echo "bun is not $BUN_VERSION" >&2; exit 1; }
