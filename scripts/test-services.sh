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
	if [ "$apt_updated" -eq 0 ]; then
		log "apt-get update"
		apt-get update -qq >/dev/null
		apt_updated=1
	fi
	log "installing $package"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
}

node_ok=$(node -e 'const [a,b]=process.versions.node.split(".").map(Number); console.log(a>20||(a===20&&b>=19)?1:0)')
if [ "$node_ok" != 1 ]; then
	log "Hangar needs Node >= 20.19 (found $(node --version))"
	exit 1
fi

need_apt git git

# Skills: a real OCI registry (CNCF distribution; tests start their own instances on free
# ports) and skopeo, an independent OCI client to cross-check Hangar's pushes and pulls.
need_apt docker-registry docker-registry
need_apt skopeo skopeo
# The token-auth registry of the skills tests trusts a certificate made with openssl.
need_apt openssl openssl

log "ready"
