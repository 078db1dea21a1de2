# Shared by the set-up scripts (test-services.sh, bench-peers.sh): logging, retried downloads,
# Debian packages, and package-manager calls in an environment of their own. Sourced, not run.

log() { printf '%s: %s\n' "${setup_name:-setup}" "$*" >&2; }

# No questions and no "needrestart" prompts or readline warnings from apt and debconf.
export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a NEEDRESTART_SUSPEND=1

attempts=4
# Runs a download step (a command or a function that first clears what a failed attempt left)
# up to $attempts times, 15 s, 30 s, 45 s apart. Its output goes to a log shown only on failure.
retry() {
	local what=$1 output attempt
	shift
	output=$(mktemp)
	for attempt in $(seq 1 "$attempts"); do
		if "$@" >"$output" 2>&1; then
			rm -f "$output"
			return 0
		fi
		log "$what failed (attempt $attempt of $attempts); its last lines:"
		tail -n 25 "$output" | sed 's/^/    /' >&2
		if [ "$attempt" -lt "$attempts" ]; then
			log "retrying in $((attempt * 15)) s"
			sleep $((attempt * 15))
		fi
	done
	rm -f "$output"
	log "$what failed $attempts times; check the network (the npm registry, Debian's mirrors) and run ${0##*/} again"
	exit 1
}

apt_updated=0
# Functions that retry runs cannot rely on `set -e` (bash ignores it inside an `if`): each step
# returns on the first failure. A failed install may have left dpkg half-configured, or come
# from a stale package list: the next attempt finishes the one and refreshes the other.
apt_install() {
	if [ "$apt_updated" -eq 0 ]; then
		apt-get update -qq || return 1
		apt_updated=1
	fi
	apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$@" && return 0
	apt_updated=0
	dpkg --configure -a
	return 1
}

# Installs a Debian package when the command it provides is missing.
need_apt() {
	local command=$1 package=$2
	command -v "$command" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "missing $command: install the Debian package $package (needs root)"
		exit 1
	fi
	log "installing $package"
	retry "apt-get install $package" apt_install "$package"
}

# Runs a command (with optional NAME=VALUE settings first, as env(1) takes them) in the
# environment it would have if this script had been started by hand rather than by npm. Under
# `npm test` every child inherits the outer npm's `npm_config_*` settings, which a nested npm
# reads as its own: its user agent names the outer Node (code-server's install script reads the
# Node version from it and refuses), its prefix and nodedir point at this project. Only the
# registry, authentication, TLS, proxy and fetch settings pass, and npm's additions to PATH go.
clean_env() {
	local name unsets=() path
	while IFS= read -r -d '' name; do
		name=${name%%=*}
		case ${name,,} in
		npm_config_registry | npm_config_*:registry | npm_config_//* | npm_config__auth* | \
			npm_config_ca | npm_config_cafile | npm_config_cert | npm_config_key | npm_config_strict_ssl | \
			npm_config_proxy | npm_config_https_proxy | npm_config_http_proxy | npm_config_noproxy | \
			npm_config_userconfig | npm_config_cache | npm_config_fetch_* | \
			npm_config_audit | npm_config_fund | npm_config_update_notifier) ;;
		npm_* | init_cwd | node) unsets+=(-u "$name") ;;
		esac
	done < <(env -0)
	path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -Ev '(node_modules/\.bin|node-gyp-bin)/?$' | paste -sd: -)
	env "${unsets[@]}" PATH="$path" "$@"
}

# npm, in an environment of its own (above). It retries a failed fetch itself too, before an
# attempt of ours counts as failed.
nested_npm() {
	clean_env npm_config_fetch_retries="${npm_config_fetch_retries:-4}" npm_config_audit=false \
		npm_config_fund=false npm_config_update_notifier=false npm "$@"
}
