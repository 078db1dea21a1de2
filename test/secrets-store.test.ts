/**
 * The encrypted store on disk, driven through real `hangar` processes: what the file is (read
 * back here with node:crypto alone), its modes, a flipped byte anywhere, a wrong password, two
 * daemons writing at once, re-encryption on reconfigure, and a password change cut short.
 */
import { readFileSync } from 'node:fs';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateSecret, ListSecretKeys } from '../protocol/protocol.secrets.js';
import { seal } from '../server/secrets/sealed.js';
import { decryptIndependently, secretsEnv, secretsService, storePaths } from './fixtures/secrets/support.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar, spawnDaemon } from './support/processes.js';

let home: TestHome;
let env: NodeJS.ProcessEnv;
let paths: ReturnType<typeof storePaths>;

beforeEach(async () => {
	home = await createTestHome('hangar-secrets-store-');
	env = secretsEnv(home);
	paths = storePaths(home);
});
afterEach(() => home.dispose());

const hangar = (args: string[], input?: string, extra: NodeJS.ProcessEnv = {}) => runHangar(args, { ...env, ...extra }, input);

async function setSecret(name: string, value: string, extra: NodeJS.ProcessEnv = {}): Promise<void> {
	const result = await hangar(['secret', 'set', name], value, extra);
	expect(result, result.stderr).toMatchObject({ code: 0 });
}

async function keys(extra: NodeJS.ProcessEnv = {}): Promise<string[]> {
	const result = await hangar(['secret', 'ls', '--json'], undefined, extra);
	expect(result.code, result.stderr).toBe(0);
	return (JSON.parse(result.stdout) as { key: string }[]).map(({ key }) => key);
}

describe('round trip', () => {
	it('values set through the CLI are resolved as written, and the file is AES-256-GCM under scrypt', async () => {
		expect(await hangar(['secret', 'setup'])).toMatchObject({ code: 0, stdout: 'Secrets provider set up (encrypted).\n' });
		const values = { github: 'ghp_first', multiline: 'line one\nline two', unicode: 'clé ✓ 🔑' };
		for (const [name, value] of Object.entries(values)) await setSecret(name, value);
		expect(await keys()).toEqual(['github', 'multiline', 'unicode']);
		const service = secretsService(env);
		for (const [name, value] of Object.entries(values)) expect(await service.resolve(name)).toBe(value);

		const password = (await readFile(paths.keyFile, 'utf8')).trim();
		expect(Buffer.from(password, 'base64url')).toHaveLength(32);
		expect(decryptIndependently(await readFile(paths.store), password)).toEqual(values);
		const file = await readFile(paths.store, 'utf8');
		for (const value of Object.values(values)) expect(file).not.toContain(value);
	});

	it('store and key file are 0600 in a 0700 folder, and a widened store is narrowed on the next write', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('a', 'one');
		expect((await stat(paths.store)).mode & 0o777).toBe(0o600);
		expect((await stat(paths.keyFile)).mode & 0o777).toBe(0o600);
		expect((await stat(paths.folder)).mode & 0o777).toBe(0o700);
		await chmod(paths.store, 0o644);
		await setSecret('b', 'two');
		expect((await stat(paths.store)).mode & 0o777).toBe(0o600);
	});

	it('each store has its own salt, and every write a fresh nonce', async () => {
		await hangar(['secret', 'setup']);
		const headerOf = async () => JSON.parse((await readFile(paths.store, 'utf8')).split('\n')[0]!);
		const first = await headerOf();
		await setSecret('a', 'one');
		const second = await headerOf();
		expect(second.kdf.salt).toBe(first.kdf.salt);
		expect(second.nonce).not.toBe(first.nonce);

		const other = await createTestHome('hangar-secrets-other-');
		try {
			await runHangar(['secret', 'setup'], secretsEnv(other));
			const otherHeader = JSON.parse((await readFile(storePaths(other).store, 'utf8')).split('\n')[0]!);
			expect(otherHeader.kdf.salt).not.toBe(first.kdf.salt);
		} finally {
			await other.dispose();
		}
	});
});

describe('a flipped byte', () => {
	const positions: Record<string, (text: string) => number> = {
		'the header (salt)': (text) => text.indexOf('"salt":"') + 10,
		'the header (nonce)': (text) => text.indexOf('"nonce":"') + 10,
		'the ciphertext': (text) => text.indexOf('\n') + 6,
		'the tag': (text) => text.length - 4,
		'the final newline': (text) => text.length - 1,
	};

	it('anywhere in the file is an error that changes nothing and loses nothing', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('github', 'ghp_kept');
		await setSecret('npm', 'npm_kept');
		const original = await readFile(paths.store);
		for (const [where, position] of Object.entries(positions)) {
			const tampered = Buffer.from(original);
			tampered[position(original.toString('utf8'))]! ^= 0x01;
			await writeFile(paths.store, tampered);

			const listed = await hangar(['secret', 'ls']);
			expect(listed.code, where).toBe(1);
			expect(listed.stderr, where).toMatch(
				/^hangar: (the secrets store .+ is damaged or was tampered with|wrong password for the secrets store .+ or its header was altered)/,
			);
			expect(listed.stderr, where).toContain('left untouched');
			expect((await hangar(['secret', 'set', 'new'], 'value')).code, where).toBe(1);
			if (where === 'the tag') expect((await hangar(['secret', 'setup'])).code, where).toBe(1);
			expect(await readFile(paths.store), where).toEqual(tampered);
		}
		await writeFile(paths.store, original);
		expect(await keys()).toEqual(['github', 'npm']);
		expect(await secretsService(env).resolve('npm')).toBe('npm_kept');
	}, 120_000);
});

describe('a store from a newer Hangar', () => {
	it('is refused as such, and left untouched', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('github', 'ghp_kept');
		const newer = Buffer.from((await readFile(paths.store, 'utf8')).replace('"version":1', '"version":2'));
		await writeFile(paths.store, newer);
		const listed = await hangar(['secret', 'ls']);
		expect(listed).toMatchObject({ code: 1 });
		expect(listed.stderr).toMatch(/^hangar: the secrets store .+ was written by a newer Hangar: upgrade Hangar/);
		expect((await hangar(['secret', 'set', 'other'], 'value')).code).toBe(1);
		expect(await readFile(paths.store)).toEqual(newer);
	});
});

describe('passwords', () => {
	it('a wrong password is a clear error that overwrites nothing', async () => {
		const right = { HANGAR_SECRETS_PASSWORD: 'correct horse battery staple' };
		const wrong = { HANGAR_SECRETS_PASSWORD: 'incorrect horse' };
		expect((await hangar(['secret', 'setup'], undefined, right)).code).toBe(0);
		await setSecret('github', 'ghp_value', right);
		await expect(stat(paths.keyFile)).rejects.toThrow(/ENOENT/);
		const header = JSON.parse((await readFile(paths.store, 'utf8')).split('\n')[0]!);
		expect(header.kdf).toMatchObject({ n: 2 ** 17, r: 8, p: 1 });
		const before = await readFile(paths.store);

		const listed = await hangar(['secret', 'ls'], undefined, wrong);
		expect(listed).toMatchObject({ code: 1 });
		expect(listed.stderr).toMatch(/^hangar: wrong password for the secrets store .+ \(tried HANGAR_SECRETS_PASSWORD\)/);
		expect((await hangar(['secret', 'set', 'other'], 'x', wrong)).code).toBe(1);
		expect((await hangar(['secret', 'setup'], undefined, wrong)).code).toBe(1);
		const withoutAny = await hangar(['secret', 'ls']);
		expect(withoutAny.stderr).toMatch(/^hangar: no password found for the secrets store/);
		expect(await readFile(paths.store)).toEqual(before);

		expect(await keys(right)).toEqual(['github']);
	}, 90_000);

	it('reconfiguring re-encrypts every secret under the new password and forgets the old one', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('github', 'ghp_value');
		await setSecret('npm', 'npm_value');
		const stored = { github: 'ghp_value', npm: 'npm_value' };
		const first = (await readFile(paths.keyFile, 'utf8')).trim();

		expect(await hangar(['secret', 'setup'])).toMatchObject({ code: 0, stdout: 'Secrets provider reconfigured (encrypted).\n' });
		const second = (await readFile(paths.keyFile, 'utf8')).trim();
		expect(second).not.toBe(first);
		expect(decryptIndependently(await readFile(paths.store), second)).toEqual(stored);
		expect(() => decryptIndependently(readFileSync(paths.store), first)).toThrow();

		const chosen = { HANGAR_SECRETS_PASSWORD: 'a password chosen by a person' };
		expect((await hangar(['secret', 'setup'], undefined, chosen)).code).toBe(0);
		await expect(stat(paths.keyFile)).rejects.toThrow(/ENOENT/);
		expect(decryptIndependently(await readFile(paths.store), chosen.HANGAR_SECRETS_PASSWORD)).toEqual(stored);
		expect((await hangar(['secret', 'ls'])).stderr).toMatch(/^hangar: no password found for the secrets store/);

		// A password given in the request is never written to a file: with no keyring, it must
		// be the one in HANGAR_SECRETS_PASSWORD.
		const refused = await hangar(['secret', 'setup', '--password-stdin'], 'another password\n', chosen);
		expect(refused).toMatchObject({ code: 2 });
		expect(refused.stderr).toMatch(/no OS keyring is available to keep the password: set HANGAR_SECRETS_PASSWORD/);
		const given = await hangar(['secret', 'setup', '--password-stdin'], `${chosen.HANGAR_SECRETS_PASSWORD}\n`, chosen);
		expect(given.code, given.stderr).toBe(0);
		expect(await keys(chosen)).toEqual(['github', 'npm']);
	}, 120_000);

	it('switching to another provider and back keeps the store', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('github', 'ghp_value');
		expect((await hangar(['secret', 'setup', '--provider', 'environment'])).code).toBe(0);
		expect((await hangar(['secret', 'ls'])).stderr).toMatch(/does not support listing keys/);
		expect((await hangar(['secret', 'setup', '--provider', 'encrypted'])).code).toBe(0);
		expect(await secretsService(env).resolve('github')).toBe('ghp_value');
	});
});

describe('a password change cut short', () => {
	// A crash between the steps of a reconfigure cannot be caused on demand: these tests write
	// the files such a crash leaves behind, with the store's own sealing code.
	it('before the new password was kept: the change is dropped', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('github', 'ghp_value');
		const sealed = await seal(new Map([['github', 'other']]), 'a password nobody kept', {
			n: 2 ** 14,
			r: 8,
			p: 1,
			salt: Buffer.alloc(16, 7).toString('base64'),
		});
		await writeFile(paths.pending, sealed);
		expect(await secretsService(env).resolve('github')).toBe('ghp_value');
		await expect(stat(paths.pending)).rejects.toThrow(/ENOENT/);
	});

	it('after the new password was kept: the change is finished', async () => {
		await hangar(['secret', 'setup']);
		await setSecret('github', 'ghp_value');
		const kept = 'the new generated key';
		const sealed = await seal(new Map([['github', 'ghp_value']]), kept, {
			n: 2 ** 14,
			r: 8,
			p: 1,
			salt: Buffer.alloc(16, 9).toString('base64'),
		});
		await writeFile(paths.pending, sealed);
		await writeFile(paths.keyFile, `${kept}\n`, { mode: 0o600 });
		expect(await keys()).toEqual(['github']);
		await expect(stat(paths.pending)).rejects.toThrow(/ENOENT/);
		expect(decryptIndependently(await readFile(paths.store), kept)).toEqual({ github: 'ghp_value' });
	});
});

describe('two processes writing at once', () => {
	it('two daemons creating secrets concurrently lose none', async () => {
		await hangar(['secret', 'setup']);
		const daemons = [spawnDaemon(env), spawnDaemon(env)];
		try {
			await Promise.all(daemons.map((daemon) => daemon.client.initialize('concurrency')));
			const perDaemon = 12;
			await Promise.all(
				daemons.flatMap((daemon, index) =>
					Array.from({ length: perDaemon }, (_, n) =>
						daemon.client.request(CreateSecret, { key: `d${index}-${n}`, value: `value-${index}-${n}` }),
					),
				),
			);
			const { keys: listed } = await daemons[0]!.client.request(ListSecretKeys, {});
			expect(listed).toHaveLength(2 * perDaemon);
			const service = secretsService(env);
			for (let index = 0; index < 2; index++) {
				for (let n = 0; n < perDaemon; n++) expect(await service.resolve(`d${index}-${n}`)).toBe(`value-${index}-${n}`);
			}
		} finally {
			await Promise.all(daemons.map((daemon) => daemon.stop()));
		}
	});
});
