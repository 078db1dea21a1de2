/**
 * The multi-stage build of a package reference: a build stage that installs the package with
 * the user's package configuration (registry, credentials, CA certificate: the build context's
 * `hangar-build/` folder, copied into that stage only), and a runtime stage that copies the
 * installed files, runs as a non-root user (65532) and starts the server. The final image's
 * layers and history hold nothing of `hangar-build/`.
 *
 * The tag is derived from what goes into the image: scheme, package, resolved version, base
 * images, added packages, build and runtime settings, and where packages come from (without
 * credentials). The same inputs give the same tag, so a second run finds the image built.
 */
import { createHash } from 'node:crypto';
import { HangarError } from '../../protocol/errors.js';
import type { RuntimeConfig } from '../../protocol/runConfig.js';
import { DEFAULT_GO_FINAL_IMAGE, DEFAULT_IMAGES } from './baseImages.js';
import { formatReference, type PackageReference } from './reference.js';
import type { PackageConfig } from './userConfig.js';

/** Bump when the templates change what they build: every tag changes with it. */
const TEMPLATE_VERSION = 1;
const USER = '65532:65532';
const PACKAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9+.:=~_-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What a build needs besides the reference: the effective runtime settings and the package configuration. */
export interface BuildInputs {
	readonly reference: PackageReference;
	/** The resolved exact version (`local-DIGEST` for a local Go directory). */
	readonly version: string;
	readonly settings: RuntimeConfig;
	readonly config: PackageConfig;
}

export interface BuildPlan {
	readonly tag: string;
	/** The reference pinned to its resolved version. */
	readonly pinned: string;
	readonly dockerfile: string;
	/** Files of the build context besides the Dockerfile, by relative path. */
	readonly files: Readonly<Record<string, string>>;
	/** A local Go module copied into the context as `src/`. */
	readonly sourceDir?: string;
	/** The build's network (`build_network`), when not the engine's default. */
	readonly network?: string;
	readonly labels: Readonly<Record<string, string>>;
	/** The images the build starts its stages from (the engine pulls them unless it has them). */
	readonly baseImages: readonly string[];
}

export function planBuild(inputs: BuildInputs): BuildPlan {
	const { reference, version, settings, config } = inputs;
	const image = settings.builder_image || DEFAULT_IMAGES[reference.scheme];
	const finalImage = reference.scheme === 'go' ? settings.final_image || DEFAULT_GO_FINAL_IMAGE : image;
	const packages = settings.additional_packages ?? [];
	for (const [index, name] of packages.entries()) {
		if (!PACKAGE_NAME.test(name)) throw invalid(`runtime_config.additional_packages[${index}]`, `${JSON.stringify(name)} is not a package name`);
	}
	for (const [index, requirement] of (settings.build_with ?? []).entries()) {
		if (/[\s'"\\$`]/.test(requirement) || requirement.startsWith('-')) throw invalid(`runtime_config.build_with[${index}]`, `${JSON.stringify(requirement)} is not a requirement`);
	}
	const runtimeEnv = settings.runtime_env ?? {};
	for (const name of Object.keys(runtimeEnv)) if (!ENV_NAME.test(name)) throw invalid(`runtime_config.runtime_env.${name}`, 'not a valid environment variable name');
	if (reference.scheme !== 'uvx' && settings.build_with?.length) throw invalid('runtime_config.build_with', 'only uvx:// builds take build_with');

	const pinned = reference.local ? `go://${reference.name}` : formatReference({ ...reference, version });
	const source = reference.scheme === 'npx' ? config.npm.registry : reference.scheme === 'uvx' ? withoutCredentials(config.python.indexUrl) : withoutCredentials(config.go.proxy);
	const digest = createHash('sha256')
		.update(JSON.stringify({ v: TEMPLATE_VERSION, scheme: reference.scheme, name: reference.name, version, image, finalImage, packages, buildWith: settings.build_with ?? [], runtimeEnv, source }))
		.digest('hex')
		.slice(0, 12);
	const tag = `hangar-build/${reference.scheme}-${slug(reference.local ? (reference.name.split('/').filter(Boolean).at(-1) ?? 'local') : reference.name)}:${tagVersion(version)}-${digest}`;
	const labels = { 'hangar.package': pinned, 'hangar.build': digest };

	const files: Record<string, string> = { 'home/.keep': '' };
	const build = [`FROM ${image} AS builder`, 'COPY hangar-build/ /hangar-build/'];
	let copy: string[];
	let entrypoint: string[];
	switch (reference.scheme) {
		case 'npx':
			files['hangar-build/npmrc'] = config.npm.npmrc + (config.caCert ? 'cafile=/hangar-build/ca.pem\n' : '');
			files['hangar-build/entry.cjs'] = NPM_ENTRY;
			build.push(
				`ENV NPM_CONFIG_USERCONFIG=/hangar-build/npmrc NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false${config.caCert ? ' NODE_EXTRA_CA_CERTS=/hangar-build/ca.pem' : ''}`,
				`RUN ${json(['npm', 'install', '--prefix', '/app', '--omit=dev', '--no-package-lock', `${reference.name}@${version}`])}`,
				`RUN ${json(['node', '/hangar-build/entry.cjs', reference.name])}`,
			);
			copy = ['COPY --from=builder /app /app'];
			entrypoint = ['node', '/app/server'];
			break;
		case 'uvx': {
			const command = reference.name;
			files['hangar-build/index-url'] = `${config.python.indexUrl}\n`;
			files['hangar-build/install.sh'] = PYTHON_INSTALL;
			build.push(`RUN ${json(['/bin/sh', '/hangar-build/install.sh', command, `${reference.name}==${version}`, ...(settings.build_with ?? [])])}`);
			copy = ['COPY --from=builder /app /app'];
			entrypoint = [`/app/bin/${command}`];
			break;
		}
		case 'go': {
			const goEnv = { CGO_ENABLED: '0', GOFLAGS: '-trimpath', GOTOOLCHAIN: 'local', GOPROXY: config.go.proxy, GOBIN: '/out', ...config.go.env };
			if (config.caCert) Object.assign(goEnv, { SSL_CERT_FILE: '/hangar-build/ca.pem' });
			build.push(`ENV ${Object.entries(goEnv).map(([key, value]) => `${key}=${json(value)}`).join(' ')}`);
			if (reference.local) build.push('COPY src/ /src/', 'WORKDIR /src', `RUN ${json(['go', 'build', '-o', '/out/server', '.'])}`);
			else build.push(`RUN ${json(['go', 'install', `${reference.name}@${version}`])}`);
			const binary = reference.local ? 'server' : goBinaryName(reference.name);
			copy = [`COPY --from=builder /out/${binary} /app/server`];
			entrypoint = ['/app/server'];
			break;
		}
	}
	if (config.caCert) files['hangar-build/ca.pem'] = config.caCert;

	const runtime = [`FROM ${finalImage}`];
	if (packages.length) {
		const list = packages.join(' ');
		runtime.push(
			`RUN if command -v apt-get >/dev/null 2>&1; then apt-get update && apt-get install -y --no-install-recommends ${list} && rm -rf /var/lib/apt/lists/*; ` +
				`elif command -v apk >/dev/null 2>&1; then apk add --no-cache ${list}; else echo "${finalImage} has neither apt-get nor apk to add ${list}" >&2; exit 1; fi`,
		);
	}
	runtime.push(...copy, `COPY --chown=${USER} home/ /home/hangar/`);
	const env = { HOME: '/home/hangar', ...runtimeEnv };
	runtime.push(`ENV ${Object.entries(env).map(([key, value]) => `${key}=${json(value)}`).join(' ')}`);
	runtime.push('WORKDIR /home/hangar', `USER ${USER}`, `LABEL ${Object.entries(labels).map(([key, value]) => `${key}=${json(value)}`).join(' ')}`, `ENTRYPOINT ${json(entrypoint)}`);

	const dockerfile = `# ${pinned}, built by Hangar\n${build.join('\n')}\n\n${runtime.join('\n')}\n`;
	return { tag, pinned, dockerfile, files, sourceDir: reference.local ? reference.name : undefined, network: settings.build_network || undefined, labels, baseImages: [...new Set([image, finalImage])] };
}

/** Finds the package's command (as npx does: its only bin, or the one named like the package) and links it as /app/server. */
const NPM_ENTRY = `const fs = require('node:fs');
const path = require('node:path');
const name = process.argv[2];
const dir = path.join('/app/node_modules', name);
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
let bin = manifest.bin;
if (bin && typeof bin === 'object') {
	const names = Object.keys(bin);
	bin = bin[name.split('/').pop()] ?? (names.length === 1 ? bin[names[0]] : undefined);
	if (!bin) {
		console.error(name + ' has several commands (' + names.join(', ') + ') and none is named like the package');
		process.exit(1);
	}
}
if (typeof bin !== 'string') {
	console.error(name + ' has no command to run (no "bin" in its package.json)');
	process.exit(1);
}
fs.symlinkSync(path.join(dir, bin), '/app/server');
`;

/** Installs a Python project into /app with uv, or with pip where the image has no uv. */
const PYTHON_INSTALL = `set -eu
command=$1
shift
index=$(cat /hangar-build/index-url)
if [ -f /hangar-build/ca.pem ]; then
	cat /etc/ssl/certs/ca-certificates.crt /hangar-build/ca.pem > /tmp/ca.pem 2>/dev/null || cp /hangar-build/ca.pem /tmp/ca.pem
	export SSL_CERT_FILE=/tmp/ca.pem PIP_CERT=/tmp/ca.pem
fi
if command -v uv >/dev/null 2>&1; then
	UV_PYTHON_DOWNLOADS=never uv venv /app
	UV_INDEX_URL=$index uv pip install --no-cache --python /app/bin/python "$@"
else
	python3 -m venv /app
	PIP_INDEX_URL=$index /app/bin/pip install --no-cache-dir --disable-pip-version-check "$@"
fi
rm -f /tmp/ca.pem
if [ ! -x "/app/bin/$command" ]; then
	echo "the project installs no command named $command" >&2
	exit 1
fi
`;

/** `go install` names the binary after the module's last element, skipping a major version suffix. */
function goBinaryName(module: string): string {
	const parts = module.split('/');
	const last = parts.at(-1)!;
	return /^v\d+$/.test(last) && parts.length > 1 ? parts.at(-2)! : last;
}

function slug(name: string): string {
	return name.toLowerCase().replace(/^@/, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 100) || 'package';
}

function tagVersion(version: string): string {
	return version.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100);
}

function withoutCredentials(raw: string): string {
	try {
		const url = new URL(raw);
		url.username = url.password = '';
		return url.toString();
	} catch {
		return raw;
	}
}

function json(value: unknown): string {
	return JSON.stringify(value);
}

function invalid(field: string, message: string): HangarError {
	return new HangarError(400, `invalid ${field}: ${message}`, 'invalid_params');
}

/** What to do about a build image this engine cannot pull. */
export function buildImageNextStep(scheme: string): string {
	const needs = scheme === 'npx' ? 'node and npm' : scheme === 'uvx' ? 'python3 (and uv or pip)' : 'the Go toolchain';
	return `choose a runtime image with ${needs} that this engine has: hangar config runtime set ${scheme} --runtime-image IMAGE (or --runtime-image on the run)`;
}
