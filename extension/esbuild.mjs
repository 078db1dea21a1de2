// Bundles the extension into dist/, one file each for:
// - dist/extension.cjs: the extension (CommonJS, as VS Code loads it; `vscode` stays external);
// - dist/hangar.mjs: the whole `hangar` CLI, which the extension runs as `hangar daemon`, so the
//   extension works without a separate install. One file: esbuild's code splitting would lose
//   the named exports of CommonJS packages imported lazily (`await import('yaml')`).
// - dist/worker.js, dist/otlpSenderWorker.js: the worker threads of code mode's sandbox and of
//   telemetry's sender, which the daemon's proxies start.
// Beside them, dist/embedded/registry.json: the built-in catalog, which the daemon reads next to
// its module (`./embedded/registry.json`), as it does from source; and the files bundled packages
// read beside themselves (copyPackageFiles).
// `--production` minifies and drops source maps (what package.mjs runs); `--outdir DIR`
// writes elsewhere than dist/.
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const production = process.argv.includes('--production');
const outdirFlag = process.argv.indexOf('--outdir');
const outdir = outdirFlag > 0 ? process.argv[outdirFlag + 1] : fileURLToPath(new URL('dist', import.meta.url));
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

const common = {
	bundle: true,
	platform: 'node',
	target: 'node20',
	minify: production,
	sourcemap: production ? false : 'linked',
	logLevel: 'warning',
	legalComments: 'none',
};

/**
 * The daemon reads two files next to its build at run time: the manifest that lets it answer
 * `initialize` before loading the table and check params without zod, and package.json for its
 * version. Bundled, both are computed now and inlined.
 */
async function inlinedDaemonFiles() {
	const { outputFiles } = await build({ ...common, minify: false, sourcemap: false, entryPoints: [root('protocol/index.ts')], format: 'esm', write: false });
	const table = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
	const manifest = table.manifestOf(table.operations, table.notifications);
	const { version } = JSON.parse(readFileSync(root('package.json'), 'utf8'));
	return {
		name: 'hangar-inline',
		setup(bundle) {
			bundle.onLoad({ filter: /[\\/]server[\\/]manifest\.ts$/ }, () => ({
				loader: 'ts',
				contents: `export function readManifest() { return ${JSON.stringify(manifest)}; }`,
			}));
			// Proxies are spawned with the CLI's entry point: here, the bundle itself.
			bundle.onLoad({ filter: /[\\/]server[\\/]workloads[\\/]cliEntry\.ts$/ }, () => ({
				loader: 'ts',
				contents: `import { fileURLToPath } from 'node:url';\nexport const CLI_ENTRY = fileURLToPath(import.meta.url);`,
			}));
			bundle.onLoad({ filter: /[\\/]server[\\/]version\.ts$/ }, () => ({
				loader: 'ts',
				contents: `export const VERSION = ${JSON.stringify(version)};\nexport const VERSION_LINE = ${JSON.stringify(`hangar v${version}`)};`,
			}));
		},
	};
}

/** `.node` files (ssh2's optional crypto binding, built by `npm ci`) stay outside the bundle. */
const nativeAddonsExternal = {
	name: 'native-addons-external',
	setup(bundle) {
		bundle.onResolve({ filter: /\.node$/ }, (args) => ({ path: args.path, external: true }));
	},
};

/**
 * The OS keyring addon goes beside the daemon bundle, in `node_modules/@napi-rs/`, where the
 * bundle's `import('@napi-rs/keyring')` finds it: the loader and the binary npm installed for
 * this platform. A package built on one platform thus carries that platform's binary; on
 * another the import fails and the secrets store falls back to its other password sources.
 */
function copyKeyringAddon() {
	const scope = root('node_modules/@napi-rs');
	for (const name of readdirSync(scope).filter((entry) => entry === 'keyring' || entry.startsWith('keyring-'))) {
		cpSync(join(scope, name), join(outdir, 'node_modules', '@napi-rs', name), { recursive: true });
	}
}

/**
 * The files bundled packages read beside themselves at run time, put beside the bundle where
 * they look: Cedar's WebAssembly (`${__dirname}/…`), QuickJS's (`new URL(…, import.meta.url)`),
 * and the protocol files of dockerode's BuildKit progress (`__dirname/proto/…`).
 */
function copyPackageFiles() {
	cpSync(root('node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm_bg.wasm'), join(outdir, 'cedar_wasm_bg.wasm'));
	cpSync(root('node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'), join(outdir, 'emscripten-module.wasm'));
	cpSync(root('node_modules/dockerode/lib/proto'), join(outdir, 'proto'), { recursive: true });
	// The workers are `.js` files of ES modules.
	writeFileSync(join(outdir, 'package.json'), '{ "type": "module" }\n');
}

/** The CLI and its workers: ESM, every package inside but the native addons. */
const daemon = {
	...common,
	format: 'esm',
	// Native addons cannot be bundled: the keyring's is copied beside the bundle (below), and
	// ssh2 (under dockerode) runs without cpu-features.
	external: ['@napi-rs/keyring', 'cpu-features'],
	plugins: [nativeAddonsExternal, await inlinedDaemonFiles()],
	// Bundled CommonJS dependencies call require() for Node's built-ins, and find files of their
	// own through __dirname: the bundle's folder, where copyPackageFiles puts those files.
	banner: {
		js: [
			"import { createRequire as __hangarRequire } from 'node:module';",
			"import { dirname as __hangarDirname } from 'node:path';",
			"import { fileURLToPath as __hangarFileURLToPath } from 'node:url';",
			'const require = __hangarRequire(import.meta.url);',
			'const __filename = __hangarFileURLToPath(import.meta.url);',
			'const __dirname = __hangarDirname(__filename);',
		].join(' '),
	},
};

rmSync(outdir, { recursive: true, force: true });
cpSync(root('server/registry/embedded/registry.json'), join(outdir, 'embedded', 'registry.json'));
await Promise.all([
	build({
		...common,
		entryPoints: [here('src/extension.ts')],
		outfile: join(outdir, 'extension.cjs'),
		format: 'cjs',
		external: ['vscode'],
	}),
	build({ ...daemon, entryPoints: [root('server/cli/main.ts')], outfile: join(outdir, 'hangar.mjs') }),
	// The worker threads the daemon's proxies start, each found beside the module that starts it
	// (`new URL('./worker.js', import.meta.url)`): here, beside the bundle.
	build({
		...daemon,
		entryPoints: {
			worker: root('server/proxy/backends/aggregate/code/sandbox/worker.ts'),
			otlpSenderWorker: root('server/proxy/chain/telemetry/otlpSenderWorker.ts'),
		},
		outdir,
	}),
]);
copyKeyringAddon();
copyPackageFiles();
