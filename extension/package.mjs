// Packages the extension: one .vsix per VS Code platform, each holding only that platform's OS
// keyring binary (the one native part of the bundled daemon).
//
//   node package.mjs                      this machine's platform, as extension/hangar.vsix
//   node package.mjs --target win32-x64   extension/hangar-win32-x64.vsix (repeatable)
//   node package.mjs --all                every platform below
//
// The bundles are built once, in a folder of their own; each package swaps only the binary beside them. A binary npm did
// not install here (another platform's) is downloaded from the npm registry at the version and
// integrity package-lock.json records, verified, and cached under node_modules/.cache.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { x as extractTar } from 'tar';

const run = promisify(execFile);
const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** VS Code's platform targets, and the `@napi-rs/keyring` binary package each one loads. */
const KEYRING_BINARY = {
	'win32-x64': 'keyring-win32-x64-msvc',
	'win32-arm64': 'keyring-win32-arm64-msvc',
	'darwin-x64': 'keyring-darwin-x64',
	'darwin-arm64': 'keyring-darwin-arm64',
	'linux-x64': 'keyring-linux-x64-gnu',
	'linux-arm64': 'keyring-linux-arm64-gnu',
	'alpine-x64': 'keyring-linux-x64-musl',
	'alpine-arm64': 'keyring-linux-arm64-musl',
};

function usage(message) {
	process.stderr.write(`package: ${message}\nusage: node package.mjs [--all | --target <${Object.keys(KEYRING_BINARY).join('|')}>...]\n`);
	process.exit(2);
}

function requestedTargets(args) {
	if (args.includes('--all')) return { targets: Object.keys(KEYRING_BINARY), named: true };
	const targets = [];
	for (let i = 0; i < args.length; i++) {
		if (args[i] !== '--target') usage(`unknown argument ${args[i]}`);
		const target = args[++i];
		if (!(target in KEYRING_BINARY)) usage(`unknown target ${target ?? '(missing)'}`);
		targets.push(target);
	}
	if (targets.length > 0) return { targets, named: true };
	const host = `${process.platform === 'linux' && isMusl() ? 'alpine' : process.platform}-${process.arch}`;
	if (!(host in KEYRING_BINARY)) usage(`VS Code has no package for this platform (${host}); name one with --target`);
	return { targets: [host], named: false };
}

function isMusl() {
	return !process.report?.getReport().header.glibcVersionRuntime;
}

/** Where npm installs from: the registry npm is configured with when run through `npm run`. */
function registry() {
	const configured = process.env.npm_config_registry || 'https://registry.npmjs.org/';
	return configured.endsWith('/') ? configured : `${configured}/`;
}

async function download(url, attempts = 3) {
	for (let attempt = 1; ; attempt++) {
		try {
			const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
			if (!response.ok) throw new Error(`HTTP ${response.status}`);
			return Buffer.from(await response.arrayBuffer());
		} catch (error) {
			process.stderr.write(`package: downloading ${url} failed (attempt ${attempt} of ${attempts}): ${error.message}\n`);
			if (attempt === attempts) throw new Error(`could not download ${url}; check the network or the npm registry setting`);
			await new Promise((resolve) => setTimeout(resolve, 2_000 * attempt));
		}
	}
}

/** The directory of a keyring binary package: npm's install, or a verified download. */
async function keyringBinary(name) {
	const installed = root(`node_modules/@napi-rs/${name}`);
	if (existsSync(installed)) return installed;
	const locked = JSON.parse(readFileSync(root('package-lock.json'), 'utf8')).packages[`node_modules/@napi-rs/${name}`];
	if (!locked?.integrity) throw new Error(`package-lock.json does not record @napi-rs/${name}: run npm install to update it`);
	const cached = root(`node_modules/.cache/hangar-vsix/${name}-${locked.version}`);
	if (existsSync(join(cached, 'package.json'))) return cached;

	const tarball = await download(`${registry()}@napi-rs/${name}/-/${name}-${locked.version}.tgz`);
	const [algorithm, expected] = locked.integrity.split(/-(.*)/s);
	if (createHash(algorithm).update(tarball).digest('base64') !== expected) {
		throw new Error(`@napi-rs/${name}@${locked.version} does not match the integrity in package-lock.json; refusing it`);
	}
	// Unpacked aside and renamed into place, so an interrupted run never leaves half a package.
	const unpacking = `${cached}.partial`;
	rmSync(unpacking, { recursive: true, force: true });
	mkdirSync(unpacking, { recursive: true });
	const archive = `${unpacking}.tgz`;
	writeFileSync(archive, tarball);
	await extractTar({ file: archive, cwd: unpacking, strip: 1 });
	rmSync(archive);
	renameSync(unpacking, cached);
	return cached;
}

/** Leaves beside the daemon bundle in `dist` the keyring loader and `target`'s binary, nothing else. */
async function placeKeyring(dist, target) {
	const scope = join(dist, 'node_modules', '@napi-rs');
	for (const entry of readdirSync(scope)) if (entry !== 'keyring') rmSync(join(scope, entry), { recursive: true, force: true });
	const name = KEYRING_BINARY[target];
	cpSync(await keyringBinary(name), join(scope, name), { recursive: true });
}

const { targets, named } = requestedTargets(process.argv.slice(2));
// Packages are made in a folder of their own, so that extension/dist (the development build)
// is left alone and two packaging runs never share a file.
const staging = mkdtempSync(join(tmpdir(), 'hangar-vsix-'));
try {
	for (const file of ['package.json', 'README.md', '.vscodeignore', 'media']) cpSync(here(file), join(staging, file), { recursive: true });
	const dist = join(staging, 'dist');
	await run(process.execPath, [here('esbuild.mjs'), '--production', '--outdir', dist]);
	const vsce = root('node_modules/@vscode/vsce/vsce');
	for (const target of targets) {
		await placeKeyring(dist, target);
		const out = named ? `hangar-${target}.vsix` : 'hangar.vsix';
		const options = ['--target', target, '--no-dependencies', '--skip-license', '--allow-missing-repository', '--out', here(out)];
		await run(process.execPath, [vsce, 'package', ...options], { cwd: staging, maxBuffer: 16 * 1024 * 1024 });
		process.stdout.write(`package: extension/${out} (${target})\n`);
	}
} finally {
	rmSync(staging, { recursive: true, force: true });
}
