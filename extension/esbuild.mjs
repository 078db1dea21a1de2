// Bundles the extension into dist/, one file each for:
// - dist/extension.cjs: the extension (CommonJS, as VS Code loads it; `vscode` stays external);
// - dist/hangar.mjs: the whole `hangar` CLI, which the extension runs as `hangar daemon`, so the
//   extension works without a separate install. One file: esbuild's code splitting would lose
//   the named exports of CommonJS packages imported lazily (`await import('yaml')`).
// Beside them, dist/embedded/registry.json: the built-in catalog, which the daemon reads next to
// its module (`./embedded/registry.json`), as it does from source.
// `--production` minifies and drops source maps (what `vsce package` runs); `--outdir DIR`
// writes elsewhere than dist/.
import { cpSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
 * The daemon reads two files next to its build at run time: the method manifest that lets it
 * answer `initialize` before loading the table, and package.json for its version. Bundled, both
 * are computed now and inlined.
 */
async function inlinedDaemonFiles() {
	const { outputFiles } = await build({ ...common, minify: false, sourcemap: false, entryPoints: [root('protocol/index.ts')], format: 'esm', write: false });
	const table = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
	const manifest = { methods: table.operations.map((row) => row.method), notifications: table.notifications.map((row) => row.method) };
	const { version } = JSON.parse(readFileSync(root('package.json'), 'utf8'));
	return {
		name: 'hangar-inline',
		setup(bundle) {
			bundle.onLoad({ filter: /[\\/]server[\\/]rpc[\\/]manifest\.ts$/ }, () => ({
				loader: 'ts',
				contents: `export function readManifest() { return ${JSON.stringify(manifest)}; }`,
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
	build({
		...common,
		entryPoints: [root('server/cli/main.ts')],
		outfile: join(outdir, 'hangar.mjs'),
		format: 'esm',
		// Native addons cannot be bundled: the keyring's is copied beside the bundle (below), and
		// ssh2 (under dockerode) runs without cpu-features.
		external: ['@napi-rs/keyring', 'cpu-features'],
		plugins: [nativeAddonsExternal, await inlinedDaemonFiles()],
		// Bundled CommonJS dependencies call require() for Node's built-ins.
		banner: { js: "import { createRequire as __hangarRequire } from 'node:module'; const require = __hangarRequire(import.meta.url);" },
	}),
]);
copyKeyringAddon();
