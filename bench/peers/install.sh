#!/usr/bin/env bash
# Installs the peers `npm run bench:peers` compares against into .bench-peers/ (ignored by git, never a
# dependency of the project): pi-coding-agent (Node) in .bench-peers/pi, oh-my-pi's coding agent and the
# Bun it runs on (the `bun` npm package ships the binary) in .bench-peers/omp. Versions must match bench/peers/paths.ts.
set -euo pipefail
cd "$(dirname "$0")/../.."
PI_VERSION="1.5.2"
OMP_VERSION="18.3.4"
BUN_VERSION="1.4.5"

# install <dir> <package.json> <package@version>...: unless every package is already there at that version.
install() {
  local dir="$1" manifest_text="$2"
  shift 2
  local missing=0
  for spec in "$@"; do
    local name="${spec%@*}" version="${spec##*@}"
    local manifest="$dir/node_modules/$name/package.json"
    if [ ! -f "$manifest" ] || [ "$(node -p "require('./$manifest').version")" != "$version" ]; then missing=1; fi
  done
  if [ "$missing" = 1 ]; then
    mkdir -p "$dir"
    echo "$manifest_text" > "$dir/package.json"
    echo "installing $* into $dir" >&2
    npm install --prefix "$dir" --no-save --no-audit --no-fund "$@" >&2
  fi
}

# pi 1.5.2 is the project's own dev dependency (the drop-in is tested against it; node_modules/@earendil-works):
# nothing to install, only to check. It needs Node >= 22.19, which the project requires too.
[ "$(node -p "require('./node_modules/@earendil-works/pi-coding-agent/package.json').version")" = "$PI_VERSION" ] ||
  { echo "node_modules has no @earendil-works/pi-coding-agent@$PI_VERSION: run npm ci" >&2; exit 1; }
# omp 18.3.4 depends on exact 18.3.4 versions of its @oh-my-pi/* siblings, which the registry lacks (their newest
# published versions are 18.2.x): pin each to its newest 18.2.x through npm overrides. The session manager we drive
# lives in pi-coding-agent itself; the siblings supply utilities (pi-utils, pi-natives) it imports.
OMP_MANIFEST='{ "private": true, "overrides": {
  "@oh-my-pi/omp-stats": "18.2.11", "@oh-my-pi/omptype": "18.2.11", "@oh-my-pi/pi-agent-core": "18.2.11",
  "@oh-my-pi/pi-ai": "18.2.11", "@oh-my-pi/pi-catalog": "18.2.11", "@oh-my-pi/pi-mnemopi": "18.2.11",
  "@oh-my-pi/pi-natives": "18.2.10", "@oh-my-pi/pi-natives-linux-x64": "18.2.11",
  "@oh-my-pi/pi-tui": "18.2.9", "@oh-my-pi/pi-utils": "18.2.9",
  "@oh-my-pi/pi-wire": "18.2.11", "@oh-my-pi/snapcompact": "18.2.11" } }'
install .bench-peers/omp "$OMP_MANIFEST" "@oh-my-pi/pi-coding-agent@$OMP_VERSION" "bun@$BUN_VERSION"
# Modules omp 18.3.4 imports that the pinned siblings lack get a stand-in of ours (bench/peers/stand-ins/).
FS_OPEN=.bench-peers/omp/node_modules/@oh-my-pi/pi-utils/src/fs-open.ts
[ -f "$FS_OPEN" ] || cp bench/peers/stand-ins/fs-open.ts "$FS_OPEN"
# pi-natives: the newest published JS loader is 18.2.10, but no linux-x64 addon 18.2.10 exists (the leaf packages
# go 18.2.3 → 18.2.11; 18.2.3's loader lacks exports omp 18.3.4 imports). Pair the 18.2.10 loader with the 18.2.11
# addon: the loader only accepts an addon whose version sentinel matches its package.json version, so that version is
# set to 18.2.11 in the bench copy. Every native call the session workloads make then goes to a real 18.2.11 addon.
NATIVES=.bench-peers/omp/node_modules/@oh-my-pi/pi-natives/package.json
node -e 'const fs = require("fs"); const f = process.argv[1]; const j = JSON.parse(fs.readFileSync(f, "utf8"));
  if (j.version !== "18.2.11") { j.version = "18.2.11"; fs.writeFileSync(f, JSON.stringify(j, null, 2)); }' "$NATIVES"
[ "$(.bench-peers/omp/node_modules/bun/bin/bun.exe --version)" = "$BUN_VERSION" ] || { echo "bun is not $BUN_VERSION" >&2; exit 1; }
