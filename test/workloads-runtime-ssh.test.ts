/**
 * The Docker runtime reaches an engine over SSH (`DOCKER_HOST=ssh://…`, as the Docker CLI does)
 * through a real OpenSSH server on loopback, with ssh2's JavaScript crypto only: the install
 * denies ssh2's and cpu-features' native build scripts (package.json `allowScripts`).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerRuntime } from '../server/runtime/docker.js';
import { readLine, sendInitialize } from './support/attachment.js';
import { freePort } from './support/registry.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'hangar-ssh-'));
const agentSocket = join(dir, 'agent.sock');
const children: ChildProcess[] = [];
let port: number;

/** Starts COMMAND and resolves once READY does, rejecting with its output if it exits first. */
function startUntil(command: string, args: string[], ready: () => Promise<boolean>): Promise<void> {
	const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
	children.push(child);
	let output = '';
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	return new Promise((resolve, reject) => {
		child.once('exit', (code) => reject(new Error(`${command} exited with ${code}: ${output}`)));
		const poll = async () => ((await ready()) ? resolve() : setTimeout(poll, 50));
		void poll();
	});
}

const accepts = (port: number) =>
	new Promise<boolean>((resolve) => {
		const socket = connect(port, '127.0.0.1', () => resolve(true)).once('error', () => resolve(false));
		socket.unref();
		setTimeout(() => socket.destroy(), 1_000).unref();
	});

beforeAll(async () => {
	await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
	await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'client_key')]);
	await run('cp', [join(dir, 'client_key.pub'), join(dir, 'authorized_keys')]);
	mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation folder
	port = await freePort();
	writeFileSync(
		join(dir, 'sshd_config'),
		[`Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${join(dir, 'host_key')}`, `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`, 'PidFile none', 'UsePAM no', 'StrictModes no', 'PasswordAuthentication no', 'PermitRootLogin prohibit-password'].join('\n'),
	);
	await startUntil('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], () => accepts(port));
	await startUntil('ssh-agent', ['-D', '-a', agentSocket], async () => existsSync(agentSocket));
	await run('ssh-add', [join(dir, 'client_key')], { env: { ...process.env, SSH_AUTH_SOCK: agentSocket } });
}, 30_000);

afterAll(() => {
	for (const child of children) child.kill();
});

describe('DockerRuntime over DOCKER_HOST=ssh://', () => {
	it('reaches the engine and its images through OpenSSH, with the key from the SSH agent', async () => {
		const runtime = new DockerRuntime({ DOCKER_HOST: `ssh://root@127.0.0.1:${port}`, SSH_AUTH_SOCK: agentSocket });
		const info = await runtime.info();
		expect(info.name).toBe('docker');
		expect(info.version).toMatch(/^\d+\.\d+/);
		expect(await runtime.imageExists('hangar-test/everything:1')).toBe(true);
		expect(await runtime.imageExists('hangar-test/no-such-image:1')).toBe(false);
	});

	it('inspects, starts and attaches to a container, and runs its command again, through OpenSSH', async () => {
		const local = new DockerRuntime();
		const runtime = new DockerRuntime({ DOCKER_HOST: `ssh://root@127.0.0.1:${port}`, SSH_AUTH_SOCK: agentSocket });
		const id = await local.create({ name: `hangar-ssh-test-${basename(dir)}`, image: 'hangar-test/everything:1', args: ['stdio'], env: {}, labels: {}, interactive: true, mounts: [], network: 'none', restartPolicy: 'no' });
		try {
			expect(await runtime.inspect(id)).toMatchObject({ id, state: 'created' });
			await runtime.start(id);
			await runtime.start(id); // starting a running container is fine
			const attachment = await runtime.attach(id);
			sendInitialize(attachment, 1);
			expect(await readLine(attachment)).toMatchObject({ id: 1, result: { serverInfo: { name: 'mcp-servers/everything' } } });
			attachment.close();
			const again = await runtime.execCommand(id);
			sendInitialize(again, 2);
			expect(await readLine(again)).toMatchObject({ id: 2, result: { serverInfo: { name: 'mcp-servers/everything' } } });
			again.close();
			expect(await runtime.inspect('hangar-ssh-test-no-such-container')).toBeUndefined();
		} finally {
			await local.remove(id);
		}
	}, 60_000);

	it('is refused by the server without the key', async () => {
		const runtime = new DockerRuntime({ DOCKER_HOST: `ssh://root@127.0.0.1:${port}`, SSH_AUTH_SOCK: join(dir, 'no-agent.sock') });
		await expect(runtime.info()).rejects.toThrow();
	});
});
