// Bundles `hangar` (CLI, daemon, proxy: one entry point, server/cli/main.ts) after tsc, so a
// process loads a few files instead of hundreds of modules (resolving and loading each was a
// large part of a command's start-up time).
//
// - The bundle is dist/server/cli/bundle/: `main.js` and the chunks it imports. Code splitting
//   keeps every dynamic `import()` a boundary, so a command still loads only its own code.
//   dist/server/cli/hangar.cjs (the `bin`, and what proxies are spawned with) is the launcher of
//   the bundle (server/cli/launcher.ts), which keeps a code cache of it. tsc leaves both entry
//   points out (tsconfig.build.json); the rest of tsc's output stays where it is (tests, the
//   proxy's OTLP worker, scripts/write-manifest.mjs).
// - The files are CommonJS: esbuild splits only ESM, so each file it writes is then turned into
//   CommonJS (`import()` into `require`). Node's ESM loader reads each module through its thread
//   pool and does more work per module: the everyday commands, loading 28–77 files, start about
//   10 ms sooner as CommonJS (docs/benchmarks.md). Packages outside the bundle that are ESM only
//   are `require`d, as Node ≥ 20.19 allows.
// - Every module's `import.meta.url` is the URL of its tsc output (dist/…/name.js), so files
//   found next to a module (commands.json, manifest.json, package.json, the embedded catalog,
//   the CLI entry a proxy is spawned with) are found as without the bundle.
// - The packages of BUNDLED_PACKAGES are bundled: zod (94 modules on its own), the MCP SDK (so
//   that a process has one zod), commander and small ESM ones. The others stay in node_modules,
//   loaded as before: CommonJS packages that find their own files through __dirname, and native
//   addons, which cannot be bundled.
// - dist/server/cli/bundle/meta.json: which source modules each output file holds (esbuild's
//   metafile), so tests can still tell which modules a process loaded
//   (test/support/loadedModules.ts).
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, transformSync } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/server/cli/bundle`;
/** Bundled packages: none reads files of its own at run time or holds a native addon. */
const BUNDLED_PACKAGES = new Set(['zod', '@modelcontextprotocol/sdk', 'commander', 'smol-toml', 'canonicalize', 'minisearch', 'stemmer', 'diff']);

const packagesOutside = {
	name: 'packages-outside',
	setup(bundle) {
		bundle.onResolve({ filter: /^[^./]/ }, (args) => {
			if (args.path.startsWith('node:')) return { path: args.path, external: true };
			const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
			return BUNDLED_PACKAGES.has(name) ? undefined : { path: args.path, external: true };
		});
	},
};

/** `import.meta.url` in a source module becomes the URL of its tsc output. */
const metaUrlOfBuild = {
	name: 'meta-url-of-build',
	setup(bundle) {
		bundle.onLoad({ filter: /\.ts$/ }, (args) => {
			const source = readFileSync(args.path, 'utf8');
			if (!source.includes('import.meta.url')) return undefined;
			const built = relative(outdir, `${root}dist/${relative(root, args.path)}`).replace(/\.ts$/, '.js').replaceAll('\\', '/');
			return { loader: 'ts', contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(built)}, import.meta.url).href`) };
		});
	},
};

/**
 * zod's messages in other languages (`z.locales`, half of zod's code) are never used: Hangar's
 * errors are English, zod's default. Only English is bundled, which every process loading zod
 * would otherwise compile.
 */
const zodEnglishOnly = {
	name: 'zod-english-only',
	setup(bundle) {
		bundle.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ loader: 'js', contents: "export { default as en } from './en.js';\n" }));
	},
};

/**
 * commander requires `node:child_process` at load, for subcommands that are executables of
 * their own, which Hangar has none of; loading it costs every command a few milliseconds. It is
 * required on use instead. The build fails if commander's line changes.
 */
const commanderChildProcessOnUse = {
	name: 'commander-child-process-on-use',
	setup(bundle) {
		bundle.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
			const source = readFileSync(args.path, 'utf8');
			const line = "const childProcess = require('node:child_process');";
			if (!source.includes(line)) throw new Error(`${args.path} no longer has: ${line}`);
			return { loader: 'js', contents: source.replace(line, "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };") };
		});
	},
};

rmSync(outdir, { recursive: true, force: true });
const { metafile } = await build({
	absWorkingDir: root,
	entryPoints: { main: `${root}server/cli/main.ts` },
	outdir,
	bundle: true,
	splitting: true,
	format: 'esm',
	platform: 'node',
	target: 'node20',
	chunkNames: '[name]-[hash]',
	minifyWhitespace: true,
	minifySyntax: true,
	legalComments: 'none',
	logLevel: 'warning',
	metafile: true,
	plugins: [packagesOutside, metaUrlOfBuild, zodEnglishOnly, commanderChildProcessOnUse],
});

// Each file as CommonJS. A file that names `import.meta.url` gets it from its own path.
for (const output of Object.keys(metafile.outputs).filter((file) => file.endsWith('.js'))) {
	const file = resolve(root, output);
	const [, hashbang, code] = /^(#!.*\n)?([^]*)$/.exec(readFileSync(file, 'utf8'));
	const { code: commonJs } = transformSync(code, {
		format: 'cjs',
		platform: 'node',
		target: 'node20',
		supported: { 'dynamic-import': false },
		define: { 'import.meta.url': '__importMetaUrl' },
		minifyWhitespace: true,
		minifySyntax: true,
		legalComments: 'none',
		logLevel: 'warning',
	});
	const metaUrl = /(?<![\w$])__importMetaUrl(?![\w$])/.test(commonJs) ? 'const __importMetaUrl=require("node:url").pathToFileURL(__filename).href;' : '';
	writeFileSync(file, `${hashbang ?? ''}${metaUrl}${commonJs}`);
}
// Node looks for the package.json that scopes each module it loads, folder by folder upwards:
// one here ends that walk at the first step for every file of the bundle.
writeFileSync(`${outdir}/package.json`, '{ "type": "commonjs" }\n');

const meta = {};
for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
	meta[relative(outdir, resolve(root, output))] = Object.keys(inputs).map((input) => {
		const path = resolve(root, input);
		const own = relative(root, path);
		return pathToFileURL(/^(protocol|server)[\\/].*\.ts$/.test(own) ? `${root}dist/${own.replace(/\.ts$/, '.js')}` : path).href;
	});
}
writeFileSync(`${outdir}/meta.json`, `${JSON.stringify(meta)}\n`);
// The launcher (server/cli/launcher.ts): CommonJS, as the bundle's files, and told the bundle's
// hash, which names the folder of its code cache.
const bundleHash = createHash('sha256');
for (const output of Object.keys(metafile.outputs).sort()) bundleHash.update(output).update(readFileSync(resolve(root, output)));
await build({
	absWorkingDir: root,
	entryPoints: [`${root}server/cli/launcher.ts`],
	outfile: `${root}dist/server/cli/hangar.cjs`,
	bundle: true,
	format: 'cjs',
	platform: 'node',
	target: 'node20',
	banner: { js: '#!/usr/bin/env node' },
	define: { BUNDLE_HASH: JSON.stringify(bundleHash.digest('hex').slice(0, 16)) },
	minifySyntax: true,
	legalComments: 'none',
	logLevel: 'warning',
});
chmodSync(`${root}dist/server/cli/hangar.cjs`, 0o755);
