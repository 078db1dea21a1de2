/**
 * The activated extension, against the `vscode` stand-in and a real `hangar daemon` (the
 * built CLI, through `hangar.daemonPath`): what activation registers, the daemon's life with
 * the extension's, the views, and the skill commands against a real OCI registry.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { activate, deactivate } from '../src/extension.js';
import { createTestHome, type TestHome } from '../../test/support/home.js';
import { HANGAR_BIN, runHangar } from '../../test/support/processes.js';
import { publishSkill } from '../../test/support/publish.js';
import { startRegistry, type Registry } from '../../test/support/registry.js';
import { skillMd } from '../../test/support/skills.js';
import { stub, type PickSession } from './vscode-stub.js';

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
	// The extension spawns its daemon with the editor's environment; client configs live in HOME.
	process.env.HANGAR_HOME = home.path;
	process.env.HOME = join(home.path, 'home');
	await mkdir(process.env.HOME);
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

	it('the Skills view follows the workspace folders', async () => {
		stub.folders = [stub.folder('/work/api')];
		start();
		const view = stub.trees.get('hangar.skills')!;
		const refreshes: unknown[] = [];
		view.onDidChangeTreeData!((nodes) => refreshes.push(nodes));
		expect((await view.getChildren()).map((node) => node.label)).toEqual(['api', 'User']);
		stub.changeWorkspaceFolders([stub.folder('/work/api'), stub.folder('/work/docs')]);
		// The whole tree: its folder nodes change.
		expect(refreshes).toEqual([undefined]);
		expect((await view.getChildren()).map((node) => node.label)).toEqual(['api', 'docs', 'User']);
	});
});

describe('skill commands', () => {
	const SKILL = 'pdf-tools';
	const FILES = { 'reference/forms.md': '# Forms\n' };
	let registry: Registry;
	let published: string;
	let reference: string;
	let api: string;
	let web: string;

	beforeAll(async () => {
		registry = await startRegistry();
		published = await mkdtemp(join(tmpdir(), 'hangar-extension-published-'));
		reference = await publishSkill(registry, published, SKILL, { files: FILES });
	}, 120_000);

	afterAll(async () => {
		await registry?.stop();
		await rm(published, { recursive: true, force: true });
	});

	beforeEach(async () => {
		api = join(home.path, 'api');
		web = join(home.path, 'web');
		for (const folder of [api, web]) {
			await mkdir(folder);
			await promisify(execFile)('git', ['init', '-q', folder]);
		}
		stub.folders = [stub.folder(api), stub.folder(web)];
		stub.configuration['hangar.defaultClients'] = ['claude-code'];
		start();
	});

	/** Answers the reference picker by typing `text` and taking the item made of it. */
	const typeReference = (text: string) => async (pick: PickSession) => {
		await pick.type(text);
		return pick.items().find((item) => item.label.endsWith(text));
	};
	const installed = (project: string, ...path: string[]) => join(project, '.claude', 'skills', SKILL, ...path);

	async function installInto(project: string): Promise<void> {
		stub.answerPick(typeReference(reference));
		stub.answerPick((pick) => pick.items().find((item) => item.detail === project));
		await vscode.commands.executeCommand('hangar.installSkill');
		expect(stub.unexpected).toEqual([]);
	}

	it('Install Skill… puts a skill from a registry into the chosen project folder, with progress', async () => {
		stub.activeDocument = stub.document(join(web, 'README.md'), '');
		let scopes: Array<{ label: string; description?: string }> = [];
		stub.answerPick(typeReference(reference));
		stub.answerPick((pick) => {
			scopes = pick.items();
			return pick.items()[0];
		});
		await vscode.commands.executeCommand('hangar.installSkill');

		// The active editor's folder comes first.
		expect(scopes.map((item) => item.description)).toEqual(['project · active editor', 'project', 'every project']);
		expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: `Installed skill ${SKILL} into project web for claude-code.` });
		expect(await readFile(installed(web, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
		expect(await readFile(installed(web, 'reference', 'forms.md'), 'utf8')).toBe(FILES['reference/forms.md']);
		await expect(stat(installed(api))).rejects.toMatchObject({ code: 'ENOENT' });
		const [progress] = stub.progress;
		expect(progress).toMatchObject({ title: `Installing skill ${reference}`, done: true });
		expect(progress!.reports.some((report) => report.message)).toBe(true);
	});

	it('the Skills view lists it under its folder, and refreshes when the daemon reports the change', async () => {
		const view = stub.trees.get('hangar.skills')!;
		const refreshes: unknown[] = [];
		view.onDidChangeTreeData!((nodes) => refreshes.push(nodes));
		// Not shown yet: VS Code would run a refresh alongside the first listing, and lose its nodes.
		await installInto(web);
		expect(refreshes).toEqual([]);
		const scopes = await view.getChildren();
		await installInto(api);
		// skills/didChange, and the command's own refresh: the same folder nodes, listed again.
		expect(refreshes.length).toBeGreaterThanOrEqual(2);
		for (const nodes of refreshes) expect(nodes).toEqual(scopes);
		const [apiNode, webNode, userNode] = await view.getChildren();
		expect([apiNode, webNode, userNode]).toEqual(scopes);
		expect((await view.getChildren(apiNode)).map((item) => [item.label, item.description, item.contextValue])).toEqual([[SKILL, 'claude-code', 'skill']]);
		expect((await view.getChildren(webNode)).map((item) => item.label)).toEqual([SKILL]);
		expect((await view.getChildren(userNode)).map((item) => item.label)).toEqual(['No skills installed']);
	});

	it('Uninstall Skill from the view asks first, then removes the files', async () => {
		await installInto(api);
		const view = stub.trees.get('hangar.skills')!;
		const [item] = await view.getChildren((await view.getChildren())[0]);
		stub.answerMessage(undefined); // backs out of the confirmation
		await vscode.commands.executeCommand('hangar.uninstallSkill', item);
		expect((await stat(installed(api, 'SKILL.md'))).isFile()).toBe(true);
		stub.answerMessage('Uninstall');
		await vscode.commands.executeCommand('hangar.uninstallSkill', item);
		expect(stub.messages.filter((message) => message.modal).map((message) => message.message)).toEqual([
			`Uninstall skill ${SKILL} from project api?`,
			`Uninstall skill ${SKILL} from project api?`,
		]);
		await expect(stat(installed(api))).rejects.toMatchObject({ code: 'ENOENT' });
	});

	it('Show Skill Content opens the SKILL.md of a reference read-only, without installing it', async () => {
		stub.answerPick(typeReference(reference));
		stub.answerMessage(undefined);
		await vscode.commands.executeCommand('hangar.showSkillContent');
		const [document] = stub.shownDocuments;
		expect(document).toMatchObject({ languageId: 'markdown', uri: { scheme: 'hangar', path: `/skills/${SKILL}/SKILL.md` } });
		expect(document!.getText()).toBe(skillMd(SKILL));
		expect(stub.messages.at(-1)).toMatchObject({ message: `Skill ${SKILL} (2 files): not installed.`, items: ['Install…'] });
		await expect(stat(installed(api))).rejects.toMatchObject({ code: 'ENOENT' });
	});

	it('Sync Skills from Lock File puts back a project’s skills at their pinned versions', async () => {
		await installInto(api);
		await rm(installed(api), { recursive: true });
		stub.activeDocument = stub.document(join(api, 'hangar.lock.yaml'), '');
		await vscode.commands.executeCommand('hangar.syncSkills');
		expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: 'Synced api: 1 installed.' });
		expect(await readFile(installed(api, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
	});

	describe('without hangar.defaultClients', () => {
		/** Answers the clients picker with what `choose` selects, keeping what it listed. */
		const answerClients = (choose: (items: ReturnType<PickSession['items']>) => unknown, seen: Array<{ placeholder?: string; items: ReturnType<PickSession['items']> }> = []) => {
			stub.answerPick((pick) => {
				seen.push({ placeholder: pick.placeholder, items: pick.items() });
				return choose(pick.items());
			});
			return seen;
		};
		const selected = (items: ReturnType<PickSession['items']>) => items.filter((item) => item.picked);

		beforeEach(() => {
			stub.changeConfiguration('hangar.defaultClients', []);
		});

		it('offers this editor first and selected, and installs into its own skills folder of each workspace folder', async () => {
			for (const project of [api, web]) {
				stub.answerPick(typeReference(reference));
				stub.answerPick((pick) => pick.items().find((item) => item.detail === project));
				const seen = answerClients(selected);
				await vscode.commands.executeCommand('hangar.installSkill');
				expect(stub.unexpected).toEqual([]);
				const [first] = seen[0]!.items;
				expect(first).toMatchObject({ label: 'vscode', description: 'this editor (Visual Studio Code)', picked: true });
				// Nothing else is on this machine (an empty home), so nothing else is selected.
				expect(selected(seen[0]!.items).map((item) => item.label)).toEqual(['vscode']);
				expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: `Installed skill ${SKILL} into project ${project.split('/').pop()} for vscode.` });
				expect(await readFile(join(project, '.github', 'skills', SKILL, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
			}
			await expect(stat(installed(api))).rejects.toMatchObject({ code: 'ENOENT' });
		});

		it('knows Cursor, code-server and the other editors built on VS Code by their name', async () => {
			stub.appName = 'Cursor';
			stub.answerPick(typeReference(reference));
			stub.answerPick((pick) => pick.items().find((item) => item.detail === api));
			const seen = answerClients(selected);
			await vscode.commands.executeCommand('hangar.installSkill');
			expect(seen[0]!.items[0]).toMatchObject({ label: 'cursor', description: 'this editor (Cursor)', picked: true });
			expect(await readFile(join(api, '.cursor', 'skills', SKILL, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
		});

		it('refuses an empty selection in the picker, and keeps it open', async () => {
			stub.answerPick(typeReference(reference));
			stub.answerPick((pick) => pick.items().find((item) => item.detail === api));
			const seen = answerClients(() => []);
			answerClients((items) => items.filter((item) => item.label === 'claude-code'), seen);
			await vscode.commands.executeCommand('hangar.installSkill');
			expect(stub.unexpected).toEqual([]);
			expect(seen).toHaveLength(2);
			expect(seen[1]!.placeholder).toMatch(/^Select at least one client/);
			// The user's empty selection stands: nothing is selected behind their back.
			expect(selected(seen[1]!.items)).toEqual([]);
			expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: `Installed skill ${SKILL} into project api for claude-code.` });
			expect(await readFile(installed(api, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
			await expect(stat(join(api, '.github', 'skills', SKILL))).rejects.toMatchObject({ code: 'ENOENT' });
		});

		it('Sync Skills from Lock File asks too, with this editor selected', async () => {
			stub.changeConfiguration('hangar.defaultClients', ['claude-code']);
			await installInto(api);
			await rm(installed(api), { recursive: true });
			stub.changeConfiguration('hangar.defaultClients', []);
			stub.activeDocument = stub.document(join(api, 'hangar.lock.yaml'), '');
			const seen = answerClients(selected);
			await vscode.commands.executeCommand('hangar.syncSkills');
			expect(stub.unexpected).toEqual([]);
			expect(selected(seen[0]!.items).map((item) => item.label)).toEqual(['vscode']);
			expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: 'Synced api: 1 installed.' });
			expect(await readFile(join(api, '.github', 'skills', SKILL, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
		});

		it('backing out of the clients picker installs nothing', async () => {
			stub.answerPick(typeReference(reference));
			stub.answerPick((pick) => pick.items().find((item) => item.detail === api));
			answerClients(() => undefined);
			await vscode.commands.executeCommand('hangar.installSkill');
			expect(stub.progress).toEqual([]);
			await expect(stat(join(api, '.github'))).rejects.toMatchObject({ code: 'ENOENT' });
		});
	});

	it('a failed install says why, and leaves nothing behind', async () => {
		stub.answerPick(typeReference(`${registry.host}/skills/${SKILL}:9.9.9`));
		stub.answerPick((pick) => pick.items()[0]);
		await vscode.commands.executeCommand('hangar.installSkill');
		expect(stub.messages.at(-1)).toMatchObject({ level: 'error', message: expect.stringMatching(/^Could not install skill .*:9\.9\.9: /), items: ['Show Log'] });
		await expect(stat(installed(api))).rejects.toMatchObject({ code: 'ENOENT' });
	});
});

describe('Register Client', () => {
	it('offers the clients Hangar knows, and registers VS Code into a workspace folder', async () => {
		const project = join(home.path, 'api');
		await mkdir(project);
		await promisify(execFile)('git', ['init', '-q', project]);
		stub.folders = [stub.folder(project)];
		start();
		let clients: string[] = [];
		let places: string[] = [];
		stub.answerPick((pick) => {
			clients = pick.items().map((item) => item.label);
			return pick.items().find((item) => item.label === 'vscode');
		});
		stub.answerPick((pick) => {
			places = pick.items().map((item) => item.label);
			return pick.items()[1];
		});
		await vscode.commands.executeCommand('hangar.registerClient');
		expect(clients).toEqual(expect.arrayContaining(['vscode', 'cursor', 'claude-code']));
		expect(places).toEqual(['$(account) User configuration', '$(folder) api']);
		expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: expect.stringMatching(/^Registered vscode \(groups: default\)/) });
		const listed = await runHangar(['client', 'ls', '--json'], { ...process.env });
		expect(JSON.parse(listed.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'vscode' })]));
	});

	it("offers a workspace folder for the other clients with a project file, naming that file", async () => {
		const project = join(home.path, 'web');
		await mkdir(project);
		stub.folders = [stub.folder(project)];
		start();
		let cursor: vscode.QuickPickItem | undefined;
		let places: Array<string | undefined> = [];
		stub.answerPick((pick) => (cursor = pick.items().find((item) => item.label === 'cursor')));
		stub.answerPick((pick) => {
			places = pick.items().map((item) => item.description);
			return pick.items()[1];
		});
		await vscode.commands.executeCommand('hangar.registerClient');
		expect(cursor?.description).toContain('per project too');
		expect(places).toEqual(['every workspace', '.cursor/mcp.json']);
		expect(stub.messages.at(-1)).toMatchObject({ level: 'info', message: expect.stringMatching(/^Registered cursor/) });
		const listed = await runHangar(['client', 'ls', '--project', project, '--json'], { ...process.env });
		expect(JSON.parse(listed.stdout).clients).toContainEqual({ name: 'cursor', file: '.cursor/mcp.json', registered: true, groups: ['default'] });
	});
});

describe('Validate Skill', () => {
	beforeEach(start);

	const problems = (uri: Parameters<typeof stub.diagnostics>[0]) => stub.diagnostics(uri).map((diagnostic) => [diagnostic.range.start.line, diagnostic.severity, diagnostic.message]);

	it('shows the problems of the unsaved SKILL.md on their lines, and follows edits', async () => {
		const path = join(home.path, 'skills', 'report-writer', 'SKILL.md');
		const text = ['---', 'name: Report_Writer', 'description: ""', '---', '# Reports', ''].join('\n');
		stub.activeDocument = stub.document(path, text);
		await vscode.commands.executeCommand('hangar.validateSkill');
		expect(problems(stub.activeDocument.uri)).toEqual([
			[1, vscode.DiagnosticSeverity.Error, expect.stringMatching(/^invalid skill name "Report_Writer"/)],
			[2, vscode.DiagnosticSeverity.Error, 'description is required'],
			[1, vscode.DiagnosticSeverity.Error, 'name "Report_Writer" must match the skill\'s folder name "report-writer"'],
		]);
		expect(stub.messages.at(-1)).toMatchObject({ level: 'error', message: 'SKILL.md has 3 errors; see the Problems view.' });

		const fixed = stub.document(path, ['---', 'name: report-writer', 'description: Writes weekly reports.', '---', '# Reports', ''].join('\n'));
		stub.changeDocument(fixed);
		await until(() => problems(fixed.uri).length === 0, 'the problems to clear');
	});

	it('asks for a SKILL.md when the active editor is something else', async () => {
		stub.activeDocument = stub.document(join(home.path, 'notes.md'), '# notes');
		await vscode.commands.executeCommand('hangar.validateSkill');
		expect(stub.messages).toEqual([expect.objectContaining({ level: 'warning', message: 'Open a SKILL.md file to validate it.' })]);
	});
});
