/**
 * The extension's interaction logic against the `vscode` stand-in: which folder a project
 * action uses, how progress and failures are shown, and the search-as-you-type picker.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { HangarError } from '../../protocol/errors.js';
import { describeFailure, showFailure } from '../src/ui/errors.js';
import { activeFolder, localFolders, pickProjectFolder, pickSkillTarget } from '../src/ui/folders.js';
import { ProgressTracker, withDaemonProgress } from '../src/ui/progress.js';
import { searchPick } from '../src/ui/search.js';
import { WorkloadItem } from '../src/views/workloads.js';
import { stub } from './vscode-stub.js';

beforeEach(() => stub.reset());

function multiRoot(): void {
	stub.folders = [stub.folder('/work/api'), stub.folder('/work/web')];
}

describe('project folders in multi-root workspaces', () => {
	it('uses the active editor’s folder without asking', async () => {
		multiRoot();
		stub.activeDocument = stub.document('/work/web/src/index.ts', '');
		expect(activeFolder()?.name).toBe('web');
		expect((await pickProjectFolder('sync skills'))?.name).toBe('web');
		expect(stub.unexpected).toEqual([]);
	});

	it('uses the only folder when no editor is in one', async () => {
		stub.folders = [stub.folder('/work/api')];
		stub.activeDocument = stub.document('/tmp/notes.md', '');
		expect((await pickProjectFolder('sync skills'))?.name).toBe('api');
	});

	it('asks which folder when several are open and no editor decides', async () => {
		multiRoot();
		let offered: string[] = [];
		stub.answerPick((pick) => {
			offered = pick.items().map((item) => item.label);
			return pick.items()[1];
		});
		expect((await pickProjectFolder('sync skills'))?.name).toBe('web');
		expect(offered).toEqual(['api', 'web']);
	});

	it('says a folder must be open when there is none', async () => {
		expect(await pickProjectFolder('sync skills')).toBeUndefined();
		expect(stub.messages).toEqual([expect.objectContaining({ level: 'warning', message: expect.stringMatching(/Open a folder first/) })]);
	});

	it('ignores folders that are not on this machine', () => {
		stub.folders = [{ uri: vscode.Uri.parse('vscode-remote://host/work/x'), name: 'x', index: 0 }, stub.folder('/work/api')];
		expect(localFolders().map((folder) => folder.name)).toEqual(['api']);
	});

	it('"ask" offers the active folder first, the others, then the user', async () => {
		multiRoot();
		stub.activeDocument = stub.document('/work/web/README.md', '');
		let offered: Array<{ label: string; description?: string }> = [];
		stub.answerPick((pick) => {
			offered = pick.items();
			return pick.items()[0];
		});
		expect(await pickSkillTarget('ask')).toMatchObject({ scope: 'project', project_root: '/work/web' });
		expect(offered.map((item) => [item.label, item.description])).toEqual([
			['$(folder) web', 'project · active editor'],
			['$(folder) api', 'project'],
			['$(account) User', 'every project'],
		]);
	});

	it('"ask" may choose the user', async () => {
		multiRoot();
		stub.answerPick((pick) => pick.items().at(-1));
		expect(await pickSkillTarget('ask')).toEqual({ scope: 'user' });
	});

	it('"project" asks only when the folder is unclear; "user" never asks', async () => {
		multiRoot();
		stub.answerPick((pick) => pick.items()[0]);
		expect(await pickSkillTarget('project')).toMatchObject({ scope: 'project', project_root: '/work/api' });
		expect(await pickSkillTarget('user')).toEqual({ scope: 'user' });
		expect(stub.pending()).toBe(0);
		expect(stub.unexpected).toEqual([]);
	});

	it('backing out of the question cancels', async () => {
		multiRoot();
		stub.answerPick(() => undefined);
		expect(await pickSkillTarget('ask')).toBeUndefined();
	});
});

describe('progress', () => {
	it('turns absolute percentages into increments that never go back', () => {
		const tracker = new ProgressTracker();
		expect(tracker.step({ kind: 'begin', title: 'Installing skill', percentage: 0 })).toEqual({ message: 'Installing skill' });
		expect(tracker.step({ kind: 'report', message: 'pulling', percentage: 30 })).toEqual({ message: 'pulling', increment: 30 });
		expect(tracker.step({ kind: 'report', percentage: 20 })).toEqual({});
		expect(tracker.step({ kind: 'report', message: 'extracting', percentage: 75 })).toEqual({ message: 'extracting', increment: 45 });
		expect(tracker.step({ kind: 'end', message: 'done' })).toEqual({ message: 'done', increment: 25 });
	});

	it('feeds the notification and turns its Cancel button into an aborted request', async () => {
		let signal: AbortSignal | undefined;
		const running = withDaemonProgress('Installing skill docs', async (options) => {
			signal = options.signal;
			options.onProgress!({ kind: 'begin', title: 'Installing', message: 'resolving', percentage: 10 });
			await new Promise((resolve) => options.signal!.addEventListener('abort', resolve));
			throw new HangarError(499, 'skills/install was cancelled', 'cancelled');
		});
		await new Promise((resolve) => setTimeout(resolve, 10));
		const [record] = stub.progress;
		expect(record).toMatchObject({ title: 'Installing skill docs', reports: [{ message: 'resolving', increment: 10 }] });
		record!.cancel();
		await expect(running).rejects.toMatchObject({ status: 499 });
		expect(signal?.aborted).toBe(true);
		expect(record!.done).toBe(true);
	});
});

describe('failures', () => {
	it('classifies errors', () => {
		expect(describeFailure(new HangarError(499, 'x was cancelled', 'cancelled'), 'install skill a').kind).toBe('cancelled');
		expect(describeFailure(new HangarError(501, 'skills/install is not implemented yet'), 'install skill a')).toEqual({
			kind: 'notImplemented',
			message: 'Cannot install skill a yet: this Hangar daemon does not implement it (skills/install is not implemented yet).',
		});
		expect(describeFailure(new HangarError(503, 'the Hangar daemon stopped', 'daemon_stopped'), 'list skills').kind).toBe('daemon');
		expect(describeFailure(new HangarError(404, 'skill "a" not found'), 'install skill a')).toEqual({
			kind: 'failed',
			message: 'Could not install skill a: skill "a" not found',
		});
	});

	it('says nothing about a cancelled action', async () => {
		await showFailure(new HangarError(499, 'cancelled', 'cancelled'), 'install skill a');
		await showFailure(Object.assign(new Error('aborted'), { name: 'AbortError' }), 'install skill a');
		expect(stub.messages).toEqual([]);
	});

	it('shows a 501 as a warning', async () => {
		await showFailure(new HangarError(501, 'workloads/create is not implemented yet'), 'run MCP server x');
		expect(stub.messages).toEqual([
			{ level: 'warning', message: expect.stringMatching(/^Cannot run MCP server x yet/), items: [], modal: false },
		]);
	});

	it('offers the log and a restart when the daemon is gone', async () => {
		stub.answerMessage('Restart Daemon');
		await showFailure(new HangarError(503, 'the Hangar daemon keeps crashing', 'daemon_failed'), 'list skills');
		expect(stub.messages[0]).toMatchObject({ level: 'error', items: ['Show Log', 'Restart Daemon'] });
		expect(stub.executed).toEqual(['hangar.restartDaemon']);
	});

	it('offers the log for other failures', async () => {
		stub.answerMessage('Show Log');
		await showFailure(new Error('boom'), 'list skills');
		expect(stub.messages[0]).toMatchObject({ level: 'error', message: 'Could not list skills: boom', items: ['Show Log'] });
		expect(stub.executed).toEqual(['hangar.showLog']);
	});
});

describe('search as you type', () => {
	const fruits = ['apple', 'apricot', 'banana'];
	const search = async (query: string) => fruits.filter((fruit) => fruit.includes(query)).map((fruit) => ({ label: fruit, value: fruit }));

	it('lists the results of the search for what is typed, after the typed-text items', async () => {
		const queries: string[] = [];
		let listed: string[] = [];
		stub.answerPick(async (pick) => {
			await pick.type('ap');
			listed = pick.items().map((item) => item.label);
			return pick.items().find((item) => item.label === 'apricot');
		});
		const chosen = await searchPick({
			title: 'Fruit',
			placeholder: 'search',
			searchAction: 'search fruit',
			search: async (query) => {
				queries.push(query);
				return search(query);
			},
			typed: (value) => (value ? [{ label: `use "${value}"`, value: `typed:${value}` }] : []),
			debounceMs: 10,
		});
		expect(chosen).toBe('apricot');
		expect(listed).toEqual(['use "ap"', 'apple', 'apricot']);
		expect(queries).toEqual(['', 'ap']);
	});

	it('shows a failed search as a note that cannot be accepted', async () => {
		let listed: string[] = [];
		stub.answerPick(async (pick) => {
			listed = pick.items().map((item) => item.label);
			return pick.items()[0]; // the note: accepting it does nothing, so the pick stays open
		});
		const chosen = searchPick({
			title: 'Fruit',
			placeholder: 'search',
			searchAction: 'search the registry',
			search: async () => {
				throw new HangarError(501, 'catalog/listSkills is not implemented yet');
			},
			debounceMs: 10,
		});
		const outcome = await Promise.race([chosen, new Promise((resolve) => setTimeout(() => resolve('still open'), 1_500))]);
		expect(outcome).toBe('still open');
		expect(listed).toEqual(['$(warning) Cannot search the registry yet: this Hangar daemon does not implement it (catalog/listSkills is not implemented yet).']);
	});

	it('resolves undefined when the user backs out', async () => {
		stub.answerPick(() => undefined);
		expect(await searchPick({ title: 'Fruit', placeholder: '', searchAction: 'search', search, debounceMs: 10 })).toBeUndefined();
	});
});

describe("Sign In to Workload's Server", () => {
	it('opens the authorization URL in the browser, then waits for the sign-in and says so', async () => {
		const { signInWorkload } = await import('../src/commands/workloads.js');
		const calls: unknown[] = [];
		const hangar = {
			workloads: { refresh() {} },
			daemon: {
				async request(operation: { method: string }, params: { name: string; wait?: number }) {
					calls.push({ method: operation.method, ...params });
					return params.wait
						? { name: params.name, status: 'signed_in' }
						: { name: params.name, status: 'pending', authorization_url: 'https://as.example.com/authorize?client_id=c&state=s1' };
				},
			},
		};
		await signInWorkload(hangar as never, { name: 'remote' } as never);
		expect(calls).toEqual([
			{ method: 'workloads/signIn', name: 'remote' },
			{ method: 'workloads/signIn', name: 'remote', wait: 300 },
		]);
		expect(stub.opened).toHaveLength(1);
		expect(stub.opened[0]).toContain('state=s1');
		expect(stub.progress[0]).toMatchObject({ title: expect.stringContaining('Signing in remote'), done: true });
		expect(stub.messages).toContainEqual(expect.objectContaining({ level: 'info', message: 'Workload remote is signed in to its server.' }));
	});

	it('shows the device code with a button that opens the verification page', async () => {
		const { signInWorkload } = await import('../src/commands/workloads.js');
		stub.answerMessage('Open');
		const hangar = {
			workloads: { refresh() {} },
			daemon: {
				async request(_operation: unknown, params: { name: string; wait?: number }) {
					return params.wait ? { name: params.name, status: 'failed', message: 'the device code expired' } : { name: params.name, status: 'pending', user_code: 'ABCD-EFGH', verification_uri: 'https://as.example.com/device' };
				},
			},
		};
		await signInWorkload(hangar as never, { name: 'headless' } as never);
		expect(stub.messages[0]).toMatchObject({ message: expect.stringContaining('ABCD-EFGH'), items: ['Open'] });
		expect(stub.opened[0]).toContain('/device');
		expect(stub.messages).toContainEqual(expect.objectContaining({ level: 'warning', message: 'Workload headless is not signed in: the device code expired' }));
	});
});

describe('a hostile server\'s text', () => {
	// An OSC 52 clipboard write, a screen clear, a right-to-left override: what a hostile
	// authorization server puts in its `error=`, or a server in its error message.
	/** Any control character but the line breaks the tooltip's own Markdown has. */
	const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
	const hostile = 'denied\u001b]52;c;Y3VybCBldmlsfHNo\u0007\u001b[2J\u202egnp.exe\u009b31m';

	it('shows the status reason as text, its control characters visible', () => {
		const item = new WorkloadItem({ name: 'remote', status: 'unauthenticated', status_context: `the authorization server refused the sign-in: ${hostile} [click](command:hangar.evil)` });
		const tooltip = (item.tooltip as { value: string }).value;
		expect(tooltip).not.toMatch(CONTROL);
		expect(tooltip).toContain('\\\\u001b\\]52;c;Y3VybCBldmlsfHNo\\\\u0007');
		expect(tooltip).not.toContain('[click](command:');
	});

	it('shows a last error and a failure with their control characters visible', () => {
		const item = new WorkloadItem({ name: 'w', status: 'running' }, {
			name: 'w',
			window_seconds: 60,
			calls: 1,
			errors: 1,
			calls_per_second: 0.02,
			total_calls: 1,
			total_errors: 1,
			total_tool_calls: 0,
			total_tool_errors: 0,
			since: new Date().toISOString(),
			last_error: { at: new Date().toISOString(), method: 'tools/call', code: -32000, message: hostile },
		});
		expect(String(item.description)).not.toMatch(CONTROL);
		expect((item.tooltip as { value: string }).value).not.toMatch(CONTROL);
		expect(describeFailure(new HangarError(502, hostile), 'call tool x').message).toBe(
			'Could not call tool x: denied\\u001b]52;c;Y3VybCBldmlsfHNo\\u0007\\u001b[2J\\u202egnp.exe\\u009b31m',
		);
	});
});
