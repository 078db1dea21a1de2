/**
 * `hangar secret …` as users type it: values from stdin or from a prompt on a real terminal
 * (a pty made by `script`) that echoes nothing, never from the command line.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { secretsEnv, secretsService } from './fixtures/secrets/support.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runHangar } from './support/processes.js';

/** Runs `hangar ARGS…` on a pseudo-terminal and types `typed` once the prompt is shown. */
function onTerminal(env: NodeJS.ProcessEnv, args: string[], typed: string, prompt: string): Promise<{ code: number; output: string }> {
	const command = [process.execPath, HANGAR_BIN, ...args].map((part) => `'${part}'`).join(' ');
	const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
	let output = '';
	let typedYet = false;
	child.stdout!.on('data', (chunk: Buffer) => {
		output += chunk.toString();
		if (!typedYet && output.includes(prompt)) {
			typedYet = true;
			child.stdin!.write(typed);
		}
	});
	return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? -1, output })));
}

/** A state of its own for the enclosing describe, and `hangar` run on it. */
function useHome() {
	let home: TestHome;
	beforeAll(async () => {
		home = await createTestHome('hangar-secrets-cli-');
	});
	afterAll(() => home?.dispose());
	const env = () => secretsEnv(home);
	return {
		hangar: (args: string[], input?: string) => runHangar(args, env(), input),
		onTerminal: (args: string[], typed: string, prompt: string) => onTerminal(env(), args, typed, prompt),
		secrets: () => secretsService(env()),
	};
}

describe('before setup', () => {
	const { hangar } = useHome();

	it('commands say how to set up', async () => {
		const result = await hangar(['secret', 'ls']);
		expect(result).toMatchObject({ code: 1 });
		expect(result.stderr).toMatch(/^hangar: secrets provider not configured: run `hangar secret setup`.*\n$/);
	});

	it('provider answers that nothing is set up, and how to set it up (exit 0)', async () => {
		const result = await hangar(['secret', 'provider']);
		expect(result).toMatchObject({ code: 0, stderr: '' });
		expect(result.stdout).toMatch(/^No secrets provider is set up yet\. Run `hangar secret setup`/);
		const json = await hangar(['secret', 'provider', '--json']);
		expect(json.code).toBe(0);
		expect(JSON.parse(json.stdout)).toMatchObject({ configured: false, setup: expect.stringContaining('hangar secret setup') });
	});

	it('an unknown provider is exit 2 naming the valid ones', async () => {
		const result = await hangar(['secret', 'setup', '--provider', 'vault']);
		expect(result.code).toBe(2);
		expect(result.stderr).toContain('valid types: encrypted, 1password, environment');
	});
});

describe('with the encrypted provider', () => {
	const { hangar, onTerminal, secrets } = useHome();
	beforeAll(async () => {
		expect(await hangar(['secret', 'setup'])).toMatchObject({ code: 0, stdout: 'Secrets provider set up (encrypted).\n' });
	});
	// Each test starts from an empty store and makes the keys it needs.
	beforeEach(async () => {
		for (const { key } of await secrets().listKeys()) await secrets().delete(key);
	});

	it('set reads stdin (one trailing newline dropped), creates then updates', async () => {
		expect(await hangar(['secret', 'set', 'github'], 'ghp_one\n')).toMatchObject({ code: 0, stdout: 'Secret github created.\n' });
		expect(await secrets().resolve('github')).toBe('ghp_one');
		expect(await hangar(['secret', 'set', 'github'], 'two\nlines\n\n')).toMatchObject({ code: 0, stdout: 'Secret github updated.\n' });
		expect(await secrets().resolve('github')).toBe('two\nlines\n');
	});

	it('a value on the command line is refused and stores nothing', async () => {
		const result = await hangar(['secret', 'set', 'argv-key', 'value-on-the-command-line']);
		expect(result.code).not.toBe(0);
		expect(result.stderr).toMatch(/too many arguments/);
		expect((await hangar(['secret', 'ls'])).stdout).not.toContain('argv-key');
	});

	it('an empty stdin is exit 2', async () => {
		const result = await hangar(['secret', 'set', 'empty'], '');
		expect(result).toMatchObject({ code: 2 });
		expect(result.stderr).toMatch(/^hangar: no value for empty on stdin/);
	});

	it('on a terminal, the value is typed at a prompt that echoes nothing', async () => {
		const typed = 'typed-at-the-prompt-5e1d';
		const result = await onTerminal(['secret', 'set', 'tty-key'], `${typed}\r`, 'Value for tty-key: ');
		expect(result.code, result.output).toBe(0);
		expect(result.output).toContain('Secret tty-key created.');
		expect(result.output).not.toContain(typed);
		expect(await secrets().resolve('tty-key')).toBe(typed);
	});

	it('Ctrl-C at the prompt stores nothing', async () => {
		const result = await onTerminal(['secret', 'set', 'interrupted'], 'partial\u0003', 'Value for interrupted: ');
		expect(result.code).toBe(1);
		expect(result.output).not.toContain('partial');
		expect((await hangar(['secret', 'ls'])).stdout).not.toContain('interrupted');
	});

	it('ls prints keys as a table or JSON, never values; provider shows capabilities', async () => {
		await secrets().create('tty-key', 'typed');
		await secrets().create('github', 'ghp_one');
		const table = await hangar(['secret', 'ls']);
		expect(table.stdout).toBe('KEY\ngithub\ntty-key\n');
		expect(JSON.parse((await hangar(['secret', 'ls', '--json'])).stdout)).toEqual([{ key: 'github' }, { key: 'tty-key' }]);
		const provider = await hangar(['secret', 'provider']);
		expect(provider.stdout).toMatch(/^NAME\s+TYPE\s+CAPABILITIES\ndefault\s+encrypted\s+read,write,delete,list,cleanup\n$/);
		expect(JSON.parse((await hangar(['secret', 'provider', '--json'])).stdout)).toMatchObject({ provider_type: 'encrypted' });
	});

	it('rm deletes; rm of a missing key is one line and exit 1', async () => {
		await secrets().create('tty-key', 'typed');
		expect(await hangar(['secret', 'rm', 'tty-key'])).toMatchObject({ code: 0, stdout: 'Secret tty-key deleted.\n' });
		expect(await hangar(['secret', 'rm', 'tty-key'])).toMatchObject({ code: 1, stderr: 'hangar: secret "tty-key" not found (hangar secret ls lists them)\n' });
	});
});
