/**
 * The encrypted store's password in the OS keyring: a real Secret Service (gnome-keyring) on a
 * private D-Bus session bus started for this file, so no real keyring is touched. Also the
 * other side: keyring enabled but no Secret Service, as on a headless machine. And the daemon
 * bundled in the VS Code extension, which must reach the same keyring entry as the CLI.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { decryptIndependently, secretsEnv, secretsService, storePaths } from './fixtures/secrets/support.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runEntry, runHangar } from './support/processes.js';

let home: TestHome;
let bus: ChildProcess;
let secretService: ChildProcess;
let busAddress: string;

/** Starts `dbus-daemon` and resolves with the address it prints. */
async function startBus(): Promise<string> {
	bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'ignore'] });
	return new Promise((resolve, reject) => {
		let output = '';
		bus.stdout!.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			if (output.includes('\n')) resolve(output.trim());
		});
		bus.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}`)));
	});
}

/** Waits until a Secret Service owns its name on the bus. */
async function secretServiceReady(env: NodeJS.ProcessEnv): Promise<void> {
	const deadline = Date.now() + 20_000;
	const args = ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus'];
	while (Date.now() < deadline) {
		const { stdout } = await promisify(execFile)(
			'dbus-send',
			[...args, 'org.freedesktop.DBus.NameHasOwner', 'string:org.freedesktop.secrets'],
			{ env },
		);
		if (stdout.includes('boolean true')) return;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error('gnome-keyring-daemon did not come up');
}

/**
 * Resolves a secret in a separate process: the keyring library reads the D-Bus address from
 * its own process's environment, so the test process itself cannot reach the private bus.
 */
async function resolveElsewhere(env: NodeJS.ProcessEnv, name: string): Promise<string> {
	const built = (path: string) => JSON.stringify(new URL(path, pathToFileURL(HANGAR_BIN)).href);
	const script = `
		const { SecretsService } = await import(${built('../secrets/service.js')});
		const { resolvePaths } = await import(${built('../store/paths.js')});
		const log = { debug() {}, info() {}, warn() {}, error() {} };
		process.stdout.write(await new SecretsService({ paths: resolvePaths(process.env), log }).resolve(${JSON.stringify(name)}));`;
	const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env });
	return stdout;
}

beforeAll(async () => {
	home = await createTestHome('hangar-secrets-keyring-');
	const keyringHome = join(home.path, 'keyring-home');
	await mkdir(keyringHome, { mode: 0o700 });
	busAddress = await startBus();
	const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: busAddress, HOME: keyringHome, XDG_RUNTIME_DIR: keyringHome };
	secretService = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
		env,
		stdio: ['pipe', 'ignore', 'ignore'],
	});
	secretService.stdin!.end('login keyring password');
	await secretServiceReady(env);
});

afterAll(async () => {
	for (const child of [secretService, bus]) {
		if (child && child.exitCode === null) {
			child.kill();
			await new Promise((resolve) => child.once('exit', resolve));
		}
	}
	await home?.dispose();
});

describe('with a Secret Service', () => {
	/** A state of its own for the test, reached with the private keyring or from a machine that cannot reach it. */
	async function newState() {
		const stateHome = await createTestHome('hangar-secrets-keyring-state-');
		onTestFinished(() => stateHome.dispose());
		return {
			paths: storePaths(stateHome),
			withKeyring: (extra: NodeJS.ProcessEnv = {}) =>
				secretsEnv(stateHome, { HANGAR_SECRETS_KEYRING: 'on', HANGAR_LOG: 'info', DBUS_SESSION_BUS_ADDRESS: busAddress, ...extra }),
			withoutKeyring: (extra: NodeJS.ProcessEnv = {}) =>
				secretsEnv(stateHome, { HANGAR_SECRETS_KEYRING: 'on', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus', ...extra }),
		};
	}

	/** A new state set up as the first test leaves it: a generated password in the keyring, and `github` in the store. */
	async function storeInKeyring() {
		const state = await newState();
		expect((await runHangar(['secret', 'setup'], state.withKeyring())).code).toBe(0);
		expect((await runHangar(['secret', 'set', 'github'], state.withKeyring(), 'ghp_in_keyring')).code).toBe(0);
		return state;
	}

	it('a generated password goes to the keyring, not to a file', async () => {
		const { paths, withKeyring, withoutKeyring } = await newState();
		const setup = await runHangar(['secret', 'setup'], withKeyring());
		expect(setup.code, setup.stderr).toBe(0);
		expect(setup.stderr).toContain('password in the OS keyring');
		await expect(stat(paths.keyFile)).rejects.toThrow(/ENOENT/);
		expect((await runHangar(['secret', 'set', 'github'], withKeyring(), 'ghp_in_keyring')).code).toBe(0);
		expect(await resolveElsewhere(withKeyring(), 'github')).toBe('ghp_in_keyring');
		const unreachable = await runHangar(['secret', 'ls'], withoutKeyring());
		expect(unreachable.stderr).toMatch(/^hangar: no password found for the secrets store/);
	});

	it('a given password is kept in the keyring and re-encrypts the store', async () => {
		const { paths, withKeyring, withoutKeyring } = await storeInKeyring();
		const given = 'a password typed by a person';
		const setup = await runHangar(['secret', 'setup', '--password-stdin'], withKeyring(), `${given}\n`);
		expect(setup.code, setup.stderr).toBe(0);
		expect(decryptIndependently(await readFile(paths.store), given)).toEqual({ github: 'ghp_in_keyring' });
		expect(await resolveElsewhere(withKeyring(), 'github')).toBe('ghp_in_keyring');
		expect(await secretsService(withoutKeyring({ HANGAR_SECRETS_PASSWORD: given })).resolve('github')).toBe('ghp_in_keyring');
	}, 60_000);

	const fromEnvironment = { HANGAR_SECRETS_PASSWORD: 'from the environment' };

	it('moving the password to HANGAR_SECRETS_PASSWORD removes it from the keyring', async () => {
		const { withKeyring } = await storeInKeyring();
		expect((await runHangar(['secret', 'setup'], withKeyring(fromEnvironment))).code).toBe(0);
		expect((await runHangar(['secret', 'ls'], withKeyring())).stderr).toMatch(/^hangar: no password found/);
		expect(await resolveElsewhere(withKeyring(fromEnvironment), 'github')).toBe('ghp_in_keyring');
	}, 60_000);

	it('each store has its own keyring entry', async () => {
		const first = await storeInKeyring();
		expect((await runHangar(['secret', 'setup'], first.withKeyring(fromEnvironment))).code).toBe(0);
		const other = await newState();
		const otherEnv = other.withKeyring();
		expect((await runHangar(['secret', 'setup'], otherEnv)).code).toBe(0);
		expect((await runHangar(['secret', 'set', 'npm'], otherEnv, 'npm_other')).code).toBe(0);
		expect(await resolveElsewhere(otherEnv, 'npm')).toBe('npm_other');
		// The first store's entry was removed when its password moved to the environment, and
		// stays empty: the other store wrote its own.
		expect((await runHangar(['secret', 'ls'], first.withKeyring())).stderr).toMatch(/^hangar: no password found/);
	}, 60_000);
});

describe("the extension's bundled daemon", () => {
	it('opens the store whose password the CLI keeps in the keyring, and keeps a new one there too', async () => {
		const bundle = await mkdtemp(join(home.path, 'bundle-'));
		await promisify(execFile)(process.execPath, [fileURLToPath(new URL('../extension/esbuild.mjs', import.meta.url)), '--outdir', bundle]);
		const bundled = join(bundle, 'hangar.mjs');
		const state = await createTestHome('hangar-secrets-keyring-bundle-');
		try {
			const env = secretsEnv(state, { HANGAR_SECRETS_KEYRING: 'on', HANGAR_LOG: 'info', DBUS_SESSION_BUS_ADDRESS: busAddress });
			expect((await runHangar(['secret', 'setup'], env)).code).toBe(0);
			expect((await runHangar(['secret', 'set', 'github'], env, 'ghp_from_the_cli')).code).toBe(0);

			const listed = await runEntry(bundled, ['secret', 'ls', '--json'], env);
			expect(listed.code, listed.stderr).toBe(0);
			expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ key: 'github' })]);

			const setup = await runEntry(bundled, ['secret', 'setup'], env);
			expect(setup.code, setup.stderr).toBe(0);
			expect(setup.stderr).toContain('password in the OS keyring');
			await expect(stat(storePaths(state).keyFile)).rejects.toThrow(/ENOENT/);
			expect(await resolveElsewhere(env, 'github')).toBe('ghp_from_the_cli');
		} finally {
			await state.dispose();
		}
	}, 60_000);
});

describe('without a Secret Service (headless)', () => {
	it('the keyring is skipped and a generated key file is used', async () => {
		const headless = await createTestHome('hangar-secrets-headless-');
		try {
			const env = secretsEnv(headless, {
				HANGAR_SECRETS_KEYRING: 'on',
				HANGAR_LOG: 'info',
				DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
			});
			const setup = await runHangar(['secret', 'setup'], env);
			expect(setup.code, setup.stderr).toBe(0);
			expect(setup.stderr).toContain('password in the key file');
			expect((await stat(storePaths(headless).keyFile)).mode & 0o777).toBe(0o600);
			expect((await runHangar(['secret', 'set', 'ci'], env, 'ci_value')).code).toBe(0);
			expect(await secretsService(env).resolve('ci')).toBe('ci_value');
		} finally {
			await headless.dispose();
		}
	});
});
