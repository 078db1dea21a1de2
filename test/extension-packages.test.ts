/**
 * The extension's per-platform packages (`npm run package -- --all`): one `.vsix` per VS Code
 * platform, each marked for its platform and holding the OS keyring binary built for it, and no
 * other. Another platform's binary is downloaded at the version and integrity package-lock.json
 * records. The Windows package's daemon is run under Wine in test/windows.test.ts.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));

/** What each platform's binary must be: its file format and machine, read from its header. */
const PLATFORMS = {
	'win32-x64': { binary: 'keyring-win32-x64-msvc', format: 'pe', machine: 'x64' },
	'win32-arm64': { binary: 'keyring-win32-arm64-msvc', format: 'pe', machine: 'arm64' },
	'darwin-x64': { binary: 'keyring-darwin-x64', format: 'mach-o', machine: 'x64' },
	'darwin-arm64': { binary: 'keyring-darwin-arm64', format: 'mach-o', machine: 'arm64' },
	'linux-x64': { binary: 'keyring-linux-x64-gnu', format: 'elf', machine: 'x64' },
	'linux-arm64': { binary: 'keyring-linux-arm64-gnu', format: 'elf', machine: 'arm64' },
	'alpine-x64': { binary: 'keyring-linux-x64-musl', format: 'elf', machine: 'x64' },
	'alpine-arm64': { binary: 'keyring-linux-arm64-musl', format: 'elf', machine: 'arm64' },
} as const;

/** The file format and machine of a native binary, from the first bytes of its header. */
function identify(header: Buffer): { format: string; machine: string } {
	if (header.readUInt16LE(0) === 0x5a4d) {
		const machine = header.readUInt16LE(header.readUInt32LE(0x3c) + 4);
		return { format: 'pe', machine: machine === 0x8664 ? 'x64' : machine === 0xaa64 ? 'arm64' : machine.toString(16) };
	}
	if (header.readUInt32LE(0) === 0xfeedfacf) {
		const cpu = header.readUInt32LE(4);
		return { format: 'mach-o', machine: cpu === 0x01000007 ? 'x64' : cpu === 0x0100000c ? 'arm64' : cpu.toString(16) };
	}
	if (header.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) {
		const machine = header.readUInt16LE(18);
		return { format: 'elf', machine: machine === 62 ? 'x64' : machine === 183 ? 'arm64' : String(machine) };
	}
	return { format: 'unknown', machine: 'unknown' };
}

interface Package {
	readonly names: string[];
	readonly manifest: string;
	/** The first 4 KiB of each `.node` file, base64. */
	readonly binaries: Record<string, string>;
}

/** A .vsix's entries, its manifest and the headers of its binaries (Python's zipfile reads it). */
async function readPackage(file: string): Promise<Package> {
	const script = [
		'import base64, json, sys, zipfile',
		'z = zipfile.ZipFile(sys.argv[1])',
		'names = z.namelist()',
		"print(json.dumps({'names': names, 'manifest': z.read('extension.vsixmanifest').decode(), 'binaries': {n: base64.b64encode(z.open(n).read(4096)).decode() for n in names if n.endswith('.node')}}))",
	].join('\n');
	const { stdout } = await run('python3', ['-c', script, file], { maxBuffer: 16 * 1024 * 1024 });
	return JSON.parse(stdout) as Package;
}

describe('the extension packaged for each platform', () => {
	const packages = new Map<string, Package>();

	beforeAll(async () => {
		const { stdout } = await run(process.execPath, [join(REPO, 'extension', 'package.mjs'), '--all'], { cwd: REPO, timeout: 240_000 });
		expect(stdout.trim().split('\n')).toHaveLength(Object.keys(PLATFORMS).length);
		for (const target of Object.keys(PLATFORMS)) packages.set(target, await readPackage(join(REPO, 'extension', `hangar-${target}.vsix`)));
	}, 300_000);

	it.each(Object.entries(PLATFORMS))('%s: marked for its platform, with its own keyring binary and no other', (target, expected) => {
		const { names, manifest, binaries } = packages.get(target)!;
		expect(manifest).toContain(`TargetPlatform="${target}"`);
		const native = Object.keys(binaries);
		expect(native).toEqual([expect.stringMatching(new RegExp(`^extension/dist/node_modules/@napi-rs/${expected.binary}/[^/]+\\.node$`))]);
		expect(identify(Buffer.from(binaries[native[0]!]!, 'base64'))).toEqual({ format: expected.format, machine: expected.machine });
		expect(names.filter((name) => name.includes('/@napi-rs/') && !name.includes(`/${expected.binary}/`) && !name.includes('/@napi-rs/keyring/'))).toEqual([]);
		// The rest is what every platform shares: the bundles, the files bundled packages read beside
		// them, and the built-in catalog.
		expect(names).toEqual(
			expect.arrayContaining(
				['extension.cjs', 'hangar.mjs', 'worker.js', 'otlpSenderWorker.js', 'package.json', 'cedar_wasm_bg.wasm', 'emscripten-module.wasm', 'proto/buildkit_status.proto', 'embedded/registry.json'].map((file) => `extension/dist/${file}`),
			),
		);
	});

	it('packages the same bundles for every platform, so only the binary differs', async () => {
		const checksums = new Set<string>();
		for (const target of Object.keys(PLATFORMS)) {
			const { stdout } = await run('python3', ['-c', "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).getinfo('extension/dist/hangar.mjs').CRC)", join(REPO, 'extension', `hangar-${target}.vsix`)]);
			checksums.add(stdout.trim());
		}
		expect(checksums.size).toBe(1);
	});

	it('refuses a target VS Code has no package for, naming the ones it has', async () => {
		const refused = await run(process.execPath, [join(REPO, 'extension', 'package.mjs'), '--target', 'win32-ia32'], { cwd: REPO }).catch((error: { code: number; stderr: string }) => error);
		expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown target win32-ia32') });
		expect((refused as { stderr: string }).stderr).toContain('win32-x64|win32-arm64|darwin-x64');
	});
});
