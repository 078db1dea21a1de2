/**
 * Pure pieces of the extension: where validation problems go in SKILL.md, which reference a
 * registry skill installs from, which client the editor itself is, names suggested for workloads, what VS Code's MCP support is
 * offered, and the package manifest's promises (every command exists, settings match the contract).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { CLIENT_APPS } from '../../protocol/common.js';
import { isReference, registrySkillSource, syncSummary } from '../src/commands/skills.js';
import { needsPrivateAccess } from '../src/commands/registry.js';
import { serverEnvironment, suggestWorkloadName } from '../src/commands/workloads.js';
import { workloadDefinitions } from '../src/mcp.js';
import { skillProblems } from '../src/problems.js';
import { editorClient } from '../src/ui/clients.js';
import type { DaemonSupervisor } from '../src/daemon.js';
import { WorkloadItem, WorkloadsView } from '../src/views/workloads.js';

const SKILL = ['---', 'name: pdf-tools', 'description: ""', 'license: MIT', '---', '# PDF tools', ''].join('\n');

describe('validation problems in SKILL.md', () => {
	it('puts a message that names a field on that field’s line', () => {
		const problems = skillProblems(SKILL, { valid: false, errors: ['description is required'], warnings: ['license should name a file or an SPDX id'] });
		expect(problems).toEqual([
			{ line: 2, start: 0, end: 'description: ""'.length, message: 'description is required', severity: 'error' },
			{ line: 3, start: 0, end: 'license: MIT'.length, message: 'license should name a file or an SPDX id', severity: 'warning' },
		]);
	});

	it('puts other messages on the first line', () => {
		expect(skillProblems('# no frontmatter', { valid: false, errors: ['SKILL.md must start with YAML frontmatter'] })).toEqual([
			{ line: 0, start: 0, end: '# no frontmatter'.length, message: 'SKILL.md must start with YAML frontmatter', severity: 'error' },
		]);
	});

	it('prefers the most specific field a message names', () => {
		const text = ['---', 'name: x', 'allowed-tools: Bash', '---'].join('\n');
		expect(skillProblems(text, { valid: false, errors: ['allowed-tools must be a list of tool names'] })[0]!.line).toBe(2);
		expect(skillProblems(text, { valid: false, errors: ['invalid skill name: too short'] })[0]!.line).toBe(1);
	});

	it('flags a name that differs from the skill’s folder', () => {
		expect(skillProblems(SKILL, { valid: true }, 'pdf')).toEqual([
			{ line: 1, start: 0, end: 'name: pdf-tools'.length, message: 'name "pdf-tools" must match the skill\'s folder name "pdf"', severity: 'error' },
		]);
		expect(skillProblems(SKILL.replace('pdf-tools', "'pdf'"), { valid: true }, 'pdf')).toEqual([]);
	});
});

describe('skill sources', () => {
	it('tells references from names the way ToolHive does', () => {
		expect(['ghcr.io/org/skill:1.0', 'localhost:5000/skill', 'git://github.com/o/r', 'repo@sha256:ab'].every(isReference)).toBe(true);
		expect(['pdf-tools', 'docs'].some(isReference)).toBe(false);
	});

	it('installs a registry skill from its OCI artifact, else its git location, else by name', () => {
		expect(
			registrySkillSource({
				name: 'pdf',
				packages: [
					{ registryType: 'git', url: 'https://github.com/org/skills.git', ref: 'v1' },
					{ registryType: 'oci', identifier: 'ghcr.io/org/skills/pdf:1.0.0' },
				],
			}),
		).toEqual({ name: 'ghcr.io/org/skills/pdf:1.0.0', ref: 'ghcr.io/org/skills/pdf:1.0.0' });
		expect(
			registrySkillSource({
				name: 'pdf',
				packages: [{ registryType: 'git', url: 'https://github.com/org/skills.git', ref: 'v1', commit: 'abc123', subfolder: 'skills/pdf' }],
			}).name,
		).toBe('git://github.com/org/skills@abc123#skills/pdf');
		expect(registrySkillSource({ name: 'pdf' })).toEqual({ name: 'pdf', ref: 'pdf' });
	});

	it('summarises a sync', () => {
		expect(syncSummary({ installed: ['a', 'b'], missing: ['a'], drifted: ['b'], already_current: ['c'], failed: [{ name: 'd' }] })).toBe('2 installed, 1 already current');
		expect(syncSummary({})).toBe('nothing to do');
	});
});

describe('the editor as a client', () => {
	it('knows the editor running the extension by its vscode.env.appName', () => {
		expect(
			['Visual Studio Code', 'Visual Studio Code - Insiders', 'code-server', 'VSCodium', 'Cursor', 'Windsurf', 'Windsurf - Next', 'Kiro', 'Trae', 'Antigravity', 'Qoder', 'Some Fork'].map(
				editorClient,
			),
		).toEqual(['vscode', 'vscode-insider', 'vscode', 'vscode', 'cursor', 'windsurf', 'windsurf', 'kiro', 'trae', 'antigravity', 'qoder', 'vscode']);
	});
});

describe('workloads', () => {
	it('suggests a valid workload name from a server name', () => {
		expect(suggestWorkloadName('io.github.stacklok/fetch')).toBe('fetch');
		expect(suggestWorkloadName('com.example/My Server!')).toBe('My-Server');
		expect(suggestWorkloadName('///')).toBe('mcp-server');
	});

	it('asks for the environment variables of the first package', () => {
		const server = {
			name: 'io.github.x/y',
			packages: [{ environmentVariables: [{ name: 'API_KEY', isSecret: true }, { description: 'nameless' }, { name: 'REGION' }] }],
		};
		expect(serverEnvironment(server).map((input) => input.name)).toEqual(['API_KEY', 'REGION']);
	});

	it('offers running workloads with a URL to VS Code’s MCP support', () => {
		const definitions = workloadDefinitions([
			{ name: 'web', status: 'running', url: 'http://127.0.0.1:4101/mcp' },
			{ name: 'stopped', status: 'stopped', url: 'http://127.0.0.1:4102/mcp' },
			{ name: 'fetch', status: 'running', url: 'http://127.0.0.1:4100/sse#fetch' },
			{ name: 'no-url', status: 'running' },
		]);
		expect(definitions.map((definition) => [definition.label, definition.uri.toString()])).toEqual([
			['fetch', vscode.Uri.parse('http://127.0.0.1:4100/sse#fetch').toString()],
			['web', vscode.Uri.parse('http://127.0.0.1:4101/mcp').toString()],
		]);
	});

	it('offers a group with a running aggregate as the aggregate alone, its members reached through it', () => {
		const running = (name: string, port: number, more: Record<string, string> = {}) => ({ name, status: 'running' as const, url: `http://127.0.0.1:${port}/mcp`, ...more });
		const labels = (workloads: Parameters<typeof workloadDefinitions>[0]) => workloadDefinitions(workloads).map((definition) => definition.label);
		const dev = [running('ev1', 4101, { group: 'dev', package: 'hangar-test/everything:1' }), running('mem', 4102, { group: 'dev', package: 'hangar-test/memory:1' })];
		const others = [running('fetch', 4103, { package: 'hangar-test/fetch:1' }), running('web', 4104, { group: 'web', package: 'hangar-test/web:1' })];
		expect(labels([...dev, ...others])).toEqual(['ev1', 'fetch', 'mem', 'web']);
		// Two aggregates over one group (each with its own filters) are both offered; other groups stay as they are.
		const aggregates = [running('dev-all', 4200, { group: 'dev', package: 'group://dev' }), running('dev-search', 4201, { group: 'dev', package: 'group://dev' })];
		expect(labels([...dev, ...others, ...aggregates])).toEqual(['dev-all', 'dev-search', 'fetch', 'web']);
		// An aggregate of the default group hides the workloads of no group named.
		expect(labels([...others, running('all', 4202, { package: 'group://default' })])).toEqual(['all', 'web']);
		// A stopped aggregate hides nothing: its members are offered on their own.
		expect(labels([...dev, { ...aggregates[0]!, status: 'stopped' as const }])).toEqual(['ev1', 'mem']);
	});

	it('treats loopback, private and plain-http registry URLs as needing permission', () => {
		expect(['http://example.com/r.json', 'https://localhost/r', 'https://127.0.0.1:8080/', 'https://10.1.2.3/', 'https://172.20.0.1/', 'https://192.168.1.1/'].every(needsPrivateAccess)).toBe(true);
		expect(['https://example.com/registry.json', 'https://172.32.0.1/', 'not a url'].some(needsPrivateAccess)).toBe(false);
	});
});

describe('a workload whose tools drifted from their pins', () => {
	const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
	const inline = (contextValue: string) =>
		(manifest.contributes.menus['view/item/context'] as Array<{ command: string; when: string }>)
			.filter(({ when }) => {
				const [, equal] = /viewItem == ([\w.]+)/.exec(when) ?? [];
				const [, pattern] = /viewItem =~ \/(.+)\/$/.exec(when) ?? [];
				return when.includes('view == hangar.workloads') && (equal === contextValue || (pattern !== undefined && new RegExp(pattern).test(contextValue)));
			})
			.map(({ command }) => command);

	it('is marked in the Workloads view and offers the review and the approval', () => {
		const drifted = new WorkloadItem({ name: 'w', status: 'running', tools_drifted: ['echo', 'search'] });
		expect(drifted.contextValue).toBe('workload.drifted');
		expect(drifted.description).toContain('tools changed: echo, search');
		expect(inline('workload.drifted')).toEqual(expect.arrayContaining(['hangar.reviewToolDrift', 'hangar.approveTools', 'hangar.stopWorkload', 'hangar.showWorkloadLogs']));
		const approved = new WorkloadItem({ name: 'w', status: 'running', tools_drifted: [] });
		expect(approved.contextValue).toBe('workload.running');
		expect(inline('workload.running')).not.toContain('hangar.approveTools');
	});
});

describe('the Workloads view', () => {
	it('shows an aggregate with its members as children; members stay listed on their own', async () => {
		const workloads = [
			{ name: 'ev1', package: 'hangar-test/everything:1', group: 'dev', status: 'running' },
			{ name: 'dev-all', package: 'group://dev', group: 'dev', status: 'running', url: 'http://127.0.0.1:4000/mcp' },
			{ name: 'mem', package: 'hangar-test/memory:1', group: 'dev', status: 'stopped' },
			{ name: 'dev-search', package: 'group://dev', group: 'dev', status: 'running' },
			{ name: 'other', package: 'hangar-test/memory:1', status: 'running' },
		];
		// Only the list is asked for; statistics are left out (the stand-in daemon has none).
		const daemon = { request: async (operation: { method: string }) => (operation.method === 'workloads/list' ? { workloads } : Promise.reject(new Error('no stats'))) };
		const view = new WorkloadsView(daemon as unknown as DaemonSupervisor);
		const top = (await view.getChildren()) as WorkloadItem[];
		view.dispose();
		expect(top.map((item) => item.name)).toEqual(['dev-all', 'dev-search', 'ev1', 'mem', 'other']);
		const aggregate = top[0]!;
		expect(aggregate.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
		expect(aggregate.description).toContain('aggregate of group dev');
		const members = (await view.getChildren(aggregate)) as WorkloadItem[];
		// Aggregates are never members, and a workload of another group is not one.
		expect(members.map((item) => item.name)).toEqual(['ev1', 'mem']);
		expect(members.map((item) => item.id)).toEqual(['workload:dev-all/ev1', 'workload:dev-all/mem']);
		expect(members[1]!.contextValue).toBe('workload.other');
		expect(new Set(top.flatMap((item) => [item, ...item.members]).map((item) => item.id)).size).toBe(top.length + 4);
		expect(top[2]!.collapsibleState).toBe(vscode.TreeItemCollapsibleState.None);
		expect(await view.getChildren(top[2]!)).toEqual([]);
	});
});

describe('the package manifest', () => {
	const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
	const contributed: Array<{ command: string; title: string; category: string }> = manifest.contributes.commands;

	it('puts every command in the Hangar category', () => {
		expect(contributed.filter((command) => command.category !== 'Hangar')).toEqual([]);
		expect(contributed.map((command) => command.title)).toEqual(
			expect.arrayContaining(['Install Skill…', 'Uninstall Skill', 'Show Skill Content', 'Validate Skill', 'Sync Skills from Lock File', 'Run MCP Server…', 'Stop Workload', 'Restart Workload', 'Remove Workload', 'Show Workload Logs', 'Register Client', 'Set Up Secrets', 'Set Secret', 'Change Default Registry']),
		);
	});

	it('refers only to contributed commands and views in its menus', () => {
		const ids = new Set(contributed.map((command) => command.command));
		const menus: Array<{ command: string; when?: string }> = Object.values(manifest.contributes.menus as Record<string, Array<{ command: string }>>).flat();
		expect(menus.filter((entry) => !ids.has(entry.command))).toEqual([]);
		const views = new Set(manifest.contributes.views.hangar.map((view: { id: string }) => view.id));
		expect(views).toEqual(new Set(['hangar.skills', 'hangar.workloads', 'hangar.registry']));
		const named = menus.flatMap((entry) => [...(entry.when ?? '').matchAll(/view == ([\w.]+)/g)].map((match) => match[1]));
		expect(named.filter((view) => !views.has(view))).toEqual([]);
	});

	it('offers exactly the contract’s client ids in hangar.defaultClients', () => {
		expect(manifest.contributes.configuration.properties['hangar.defaultClients'].items.enum).toEqual([...CLIENT_APPS]);
	});

	it('names the MCP provider it registers', () => {
		expect(manifest.contributes.mcpServerDefinitionProviders).toEqual([{ id: 'hangar.workloads', label: expect.any(String) }]);
	});
});
