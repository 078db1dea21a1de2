/**
 * The set-up scripts (`scripts/test-services.sh`, `scripts/bench-peers.sh`) behave the same under
 * `npm test`, under `.ci/run` and by hand: a nested package-manager call never sees the outer npm's
 * settings. And the install a user makes runs no dependency's install script by surprise.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MCP_TOOLS } from './support/mcpClients.js';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..');
const SETUP_LIB = join(REPO, 'scripts', 'setup-lib.sh');
// Node 22, which test-services.sh fetches: a Node other than the one npm test runs on.
const NODE22_BIN = join(MCP_TOOLS, 'node22', 'bin');

/**
 * Runs COMMAND (bash, with the set-up's helpers sourced) the way `npm test` runs the set-up: as an
 * npm script, so that it inherits npm's environment, with Node 22 first on PATH.
 */
async function underNpmScript(command: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
	const project = mkdtempSync(join(tmpdir(), 'hangar-setup-'));
	const script = `. ${JSON.stringify(SETUP_LIB)}; PATH=${JSON.stringify(NODE22_BIN)}:"$PATH"; ${command}`;
	writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'probe', private: true, scripts: { probe: `bash -c ${shellQuote(script)}` } }));
	const { stdout } = await run('npm', ['run', '--silent', 'probe'], { cwd: project, env: { ...process.env, ...env } });
	return stdout.trim();
}

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

describe('a nested npm call', () => {
	// What an install script of the nested call sees (code-server's reads the Node version from it).
	const AGENT_SEEN_BY_SCRIPTS = `exec --yes=false -c 'echo "$npm_config_user_agent"'`;

	it('under a plain npm, hands its scripts the outer npm user agent (the hazard this guards against)', async () => {
		// If npm ever stops passing its settings down, this fails and the guard may be simplified.
		expect(await underNpmScript(`npm ${AGENT_SEEN_BY_SCRIPTS}`)).toMatch(/ node\/v20\./);
	});

	it('through nested_npm, hands its scripts the user agent of the Node it runs on, as when started by hand', async () => {
		expect(await underNpmScript(`nested_npm ${AGENT_SEEN_BY_SCRIPTS}`)).toMatch(/ node\/v22\./);
	});

	it('keeps the registry, authentication and TLS settings and drops the rest of npm’s environment', async () => {
		// npm hands its scripts no authentication settings of its own: set them as a user's shell would.
		const env = {
			npm_config_registry: 'http://127.0.0.1:9/',
			'npm_config_//127.0.0.1:9/:_authToken': 'token-kept',
			'npm_config_@corp:registry': 'http://127.0.0.1:9/corp/',
			npm_config_cafile: '/etc/ssl/certs/ca-certificates.crt',
			npm_config_nodedir: '/somewhere/else',
		};
		const seen = (await underNpmScript(`env ${Object.entries(env).map(([name, value]) => shellQuote(`${name}=${value}`)).join(' ')} bash -c ${shellQuote(`. ${SETUP_LIB}; echo "BEFORE=$PATH"; clean_env env`)}`)).split('\n');
		expect(seen).toContain('npm_config_registry=http://127.0.0.1:9/');
		expect(seen).toContain('npm_config_//127.0.0.1:9/:_authToken=token-kept');
		expect(seen).toContain('npm_config_@corp:registry=http://127.0.0.1:9/corp/');
		expect(seen).toContain('npm_config_cafile=/etc/ssl/certs/ca-certificates.crt');
		const names = seen.map((line) => line.split('=')[0]);
		for (const dropped of ['npm_config_user_agent', 'npm_config_nodedir', 'npm_config_local_prefix', 'npm_lifecycle_event', 'npm_package_name', 'npm_execpath', 'INIT_CWD']) {
			expect(names).not.toContain(dropped);
		}
		// The PATH the inner shell had (its startup file, $BASH_ENV, may have added to it), less npm's additions, in order.
		const entries = (prefix: string) => seen.find((line) => line.startsWith(prefix))!.slice(prefix.length).split(':');
		const before = entries('BEFORE=');
		const after = entries('PATH=');
		expect(before.some((entry) => /node_modules\/\.bin|node-gyp-bin/.test(entry))).toBe(true);
		expect(after).toEqual(before.filter((entry) => !/(node_modules\/\.bin|node-gyp-bin)\/?$/.test(entry)));
		expect(after).toContain(NODE22_BIN);
	});

	it('is the only way the set-up scripts call npm', () => {
		for (const script of ['test-services.sh', 'bench-peers.sh']) {
			const calls = readFileSync(join(REPO, 'scripts', script), 'utf8')
				.split('\n')
				.filter((line) => !line.trimStart().startsWith('#'))
				.filter((line) => /(^|[\s;&|(])npm\s+(install|ci|pack|exec|run|i)\b/.test(line));
			expect(calls, `${script} calls npm outside nested_npm`).toEqual([]);
		}
	});
});

describe("the project's own install", () => {
	it('decides every dependency install script in allowScripts, so npm ci neither warns nor runs one by surprise', () => {
		const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
		const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean; link?: boolean }> };
		const withScripts = Object.entries(lock.packages)
			.filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript)
			.map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
		expect(withScripts.length).toBeGreaterThan(0);
		for (const name of withScripts) expect(manifest.allowScripts, name).toHaveProperty([name]);
	});

	it('bundles with esbuild without its install script (the extension build uses its JavaScript API)', async () => {
		const { transform } = await import('esbuild');
		expect((await transform('const answer: number = 42', { loader: 'ts' })).code).toBe('const answer = 42;\n');
	});

	it('installs none of the benchmark peers, whose dependencies want a newer Node', () => {
		const lock = readFileSync(join(REPO, 'package-lock.json'), 'utf8');
		expect(lock).not.toMatch(/"node_modules\/(supergateway|mcp-proxy|pipenet|tldjs)"/);
	});
});
