/**
 * The activated extension, against the `vscode` stand-in and a real `hangar daemon` (the
 * built CLI, through `hangar.daemonPath`): what activation registers, the daemon's life with
 * the extension's, and the views.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { activate, deactivate } from '../src/extension.js';
import { createTestHome, type TestHome } from '../../test/support/home.js';
import { HANGAR_BIN } from '../../test/support/processes.js';
import { stub } from './vscode-stub.js';

const EXTENSION_DIR = fileURLToPath(new URL('..', import.meta.url));
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

let home: TestHome;
let context: { subscriptions: Array<{ dispose(): unknown }>; extensionUri: vscode.Uri; extension: { packageJSON: unknown } };

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${stub.output.join('\n')}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

function daemonPids(): number[] {
	return stub.output.flatMap((line) => {
		const match = /ready \(pid (\d+)\)/.exec(line);
		return match ? [Number(match[1])] : [];
	});
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

function start(): void {
	context = { subscriptions: [], extensionUri: vscode.Uri.file(EXTENSION_DIR), extension: { packageJSON: manifest } };
	activate(context as unknown as Parameters<typeof activate>[0]);
}

beforeEach(async () => {
	stub.reset();
	home = await createTestHome('hangar-extension-');
	// The extension spawns its daemon with the editor's environment.
	process.env.HANGAR_HOME = home.path;
	process.env.HANGAR_LOG = 'warn';
	stub.configuration['hangar.daemonPath'] = HANGAR_BIN;
});

afterEach(async () => {
	await deactivate();
	for (const subscription of context.subscriptions) subscription.dispose();
	await home.dispose();
});

describe('activation', () => {
	it('registers every contributed command, and nothing else', () => {
		start();
		const contributed = manifest.contributes.commands.map((command: { command: string }) => command.command).sort();
		expect((vscode.commands as unknown as { registered(): string[] }).registered().sort()).toEqual(contributed);
	});

	it('offers workloads to VS Code’s MCP support when the editor has the API', async () => {
		start();
		const provider = stub.mcpProviders.get('hangar.workloads');
		expect(provider).toBeDefined();
		expect(Array.isArray(await provider!.provideMcpServerDefinitions())).toBe(true);
	});

	it('activates without the MCP API in editors that lack it', () => {
		stub.mcpApi = false;
		start();
		expect(stub.mcpProviders.size).toBe(0);
		expect((vscode.commands as unknown as { registered(): string[] }).registered()).toContain('hangar.installSkill');
	});
});

describe('the daemon’s life', () => {
	it('ends the daemon with shutdown and exit when the extension deactivates', async () => {
		start();
		await vscode.commands.executeCommand('hangar.restartDaemon');
		const [pid] = daemonPids();
		expect(alive(pid!)).toBe(true);
		await deactivate();
		await until(() => !alive(pid!), 'the daemon to exit');
		expect(stub.output.at(-1)).toBe('daemon exited with code 0');
	});

	it('Restart Daemon replaces the daemon and says so', async () => {
		start();
		await vscode.commands.executeCommand('hangar.restartDaemon');
		await vscode.commands.executeCommand('hangar.restartDaemon');
		const [first, second] = daemonPids();
		expect(second).not.toBe(first);
		expect(alive(first!)).toBe(false);
		expect(stub.messages.filter((message) => message.message === 'The Hangar daemon was restarted.')).toHaveLength(2);
	});

	it('restarts the daemon with the new path when hangar.daemonPath changes', async () => {
		start();
		await vscode.commands.executeCommand('hangar.restartDaemon');
		stub.changeConfiguration('hangar.daemonPath', '/nonexistent/hangar');
		await until(() => stub.output.some((line) => line.includes('could not run /nonexistent/hangar')), 'the new path to be tried');
		stub.changeConfiguration('hangar.daemonPath', HANGAR_BIN);
		await until(() => daemonPids().length === 2, 'a daemon from the restored path');
	});

	it('Show Daemon Log shows the output channel', async () => {
		start();
		await vscode.commands.executeCommand('hangar.showLog');
		expect(stub.executed).toContain('output.show:Hangar');
	});
});

describe('views', () => {
	it('the Skills view has a node per local workspace folder, then the user', async () => {
		stub.folders = [stub.folder('/work/api'), stub.folder('/work/web')];
		start();
		const roots = await stub.trees.get('hangar.skills')!.getChildren();
		expect(roots.map((node) => [node.label, node.description])).toEqual([
			['api', 'project'],
			['web', 'project'],
			['User', 'every project'],
		]);
	});
});
