#!/usr/bin/env bash
# Installs the peers `npm run bench` measures Hangar against (supergateway, mcp-proxy) into a
# cache of their own, so that they are no part of the install a user or the tests make: their
# dependencies want a newer Node than Hangar does, and one runs a network-fetching install script.
# Idempotent: a finished install is marked `complete` and kept.
set -euo pipefail
setup_name=bench-peers
# shellcheck source=scripts/setup-lib.sh
. "$(dirname "$0")/setup-lib.sh"

# bench/processes.ts resolves the peers from the same folder.
peers=${HANGAR_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangar-bench}/peers
packages=(supergateway@4.0.0 mcp-proxy@6.7.19)
marker="$peers/complete-$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-16)"

install_peers() {
	rm -rf "$peers" && mkdir -p "$peers" &&
		nested_npm install --prefix "$peers" --ignore-scripts --no-save --engine-strict=false "${packages[@]}" &&
		touch "$marker"
}
if [ ! -f "$marker" ]; then
	log "installing ${packages[*]} into $peers"
	retry "npm install ${packages[*]}" install_peers
fi
