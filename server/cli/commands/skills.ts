/**
 * `hangar skill validate|content|install|ls|info|rm|build|builds|rm-build|push|sync|upgrade`.
 */
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { ClientApp, Scope } from '../../../protocol/common.js';
import { HangarError } from '../../../protocol/errors.js';
import {
	type SkillSyncResult,
	type SkillUpgradeResult,
} from '../../../protocol/protocol.skills.js';
import { enclosingProject } from '../../store/project.js';
import { addCommands, collect, printJson, printTable, type Cli, type CommandFactory } from '../cli.js';
import { compareNames } from '../../order.js';

interface PlacementOptions {
	scope?: Scope;
	/** `--project [dir]`: true without a folder. */
	project?: string | boolean;
	/** `--project-root <dir>`, the older spelling of `--project <dir>`. */
	projectRoot?: string;
}

type PlacementParams = { scope?: Scope; project_root?: string };

/**
 * The project a command names: `--project DIR` (symlinks followed), or with `--project` alone
 * or `--scope project` the git work tree around the current folder; undefined for none.
 */
async function namedProject(options: PlacementOptions): Promise<string | undefined> {
	const given = options.projectRoot ?? (typeof options.project === 'string' ? options.project : undefined);
	if (given !== undefined) return realpath(resolve(given)).catch(() => resolve(given));
	if (options.project === true || options.scope === 'project') return (await enclosingProject(process.cwd())) ?? process.cwd();
	return undefined;
}

async function placement(options: PlacementOptions): Promise<PlacementParams> {
	const root = await namedProject(options);
	return { ...(options.scope && { scope: options.scope }), ...(root && { project_root: root }) };
}

/**
 * Where an installed skill is, for `info` and `rm`: as the flags say; without flags, the
 * project around the current folder when the skill is installed there, else the user's.
 */
async function placementOfInstalled(cli: Cli, name: string, options: PlacementOptions): Promise<PlacementParams> {
	const named = await placement(options);
	if (named.scope || named.project_root) return named;
	const project = await enclosingProject(process.cwd());
	if (project === undefined) return {};
	const inProject = await cli.call('skills/get', { name, project_root: project }).then(
		() => true,
		(error: unknown) => {
			if (error instanceof HangarError && error.status === 404) return false;
			throw error;
		},
	);
	return inProject ? { project_root: project } : {};
}

function withProject(command: Command, description: string): Command {
	return command.option('--project [dir]', description).addOption(new Option('--project-root <dir>', 'the same as --project <dir>').hideHelp());
}

function withPlacement(command: Command): Command {
	return withProject(command.option('--scope <scope>', 'user or project'), 'project scope: in <dir>, or the git work tree around the current folder');
}

function validateSkill(skill: Command, cli: Cli): Command {
	return skill
		.command('validate')
		.description('Check a skill folder against the Agent Skills rules')
		.argument('<path>', 'the skill folder (its name must match SKILL.md\'s name)')
		.option('--json', 'print JSON')
		.action(async (path: string, options: { json?: boolean }) => {
			const result = await cli.call('skills/validate', { path: resolve(path) });
			if (options.json) return printJson(result);
			for (const warning of result.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
			// Errors as every command's: one line each, `hangar: …`, exit 1.
			for (const error of result.errors ?? []) process.stderr.write(`hangar: invalid skill: ${error}\n`);
			if (result.valid) process.stdout.write('Valid skill.\n');
			else process.exitCode = 1;
		});
}

function showSkillContent(skill: Command, cli: Cli): Command {
	return skill
		.command('content')
		.description('Show a skill by reference without installing it')
		.argument('<ref>', 'OCI reference, git://host/owner/repo[@ref][#path], or local build tag')
		.option('--json', 'print JSON')
		.action(async (ref: string, options: { json?: boolean }) => {
			const content = await cli.call('skills/content', { ref });
			if (options.json) return printJson(content);
			process.stdout.write(`${content.name}${content.version ? ` ${content.version}` : ''}: ${content.description}\n\n`);
			printTable(content.files ?? [], { path: (file) => file.path, size: (file) => file.size }, 'No files.');
		});
}

function installSkill(skill: Command, cli: Cli): Command {
	return withPlacement(
		skill
			.command('install')
			.description('Install a skill for your clients (all detected ones unless --client)')
			.argument('<ref>', 'skill name, namespace/name, OCI reference, git://host/owner/repo[@ref][#path], or local build tag')
			.option('--version <version>', 'version (tag) to install'),
	)
		.option('-c, --client <id>', 'client to install for (repeatable; e.g. claude-code, cursor, codex)', collect)
		.option('--force', 'overwrite a skill folder Hangar did not write')
		.option('-g, --group <group>', 'group to add the skill to (default "default")')
		.option('--json', 'print JSON')
		.action(async (ref: string, options: PlacementOptions & { version?: string; client?: string[]; force?: boolean; group?: string; json?: boolean }) => {
			const { skill: installed, warnings = [] } = await cli.call('skills/install', {
				name: ref,
				...(options.version && { version: options.version }),
				...(await placement(options)),
				...(options.client && { clients: options.client as ClientApp[] }),
				...(options.force && { force: true }),
				...(options.group && { group: options.group }),
			});
			for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
			if (options.json) return printJson(installed);
			process.stdout.write(`Installed ${installed.metadata?.name} (${installed.digest?.slice(0, 19)}) for ${installed.clients?.join(', ')}.\n`);
		});
}

function listSkills(skill: Command, cli: Cli): Command {
	return withPlacement(skill.command('ls').alias('list').description('List installed skills'))
		.option('-c, --client <id>', 'only skills installed for this client')
		.option('-g, --group <group>', 'only skills of this group')
		.option('--json', 'print JSON')
		.action(async (options: PlacementOptions & { client?: string; group?: string; json?: boolean }) => {
			const { skills } = await cli.call('skills/list', {
				...(await placement(options)),
				...(options.client && { client: options.client as ClientApp }),
				...(options.group && { group: options.group }),
			});
			if (options.json) return printJson(skills);
			printTable(
				skills,
				{
					name: (s) => s.metadata?.name,
					version: (s) => s.metadata?.version || undefined,
					scope: (s) => (s.scope === 'project' ? `project ${s.project_root}` : s.scope),
					clients: (s) => s.clients,
					reference: (s) => s.reference,
				},
				'No skills installed.',
			);
		});
}

function showSkill(skill: Command, cli: Cli): Command {
	return withPlacement(skill.command('info').description('Show an installed skill').argument('<name>'))
		.option('--json', 'print JSON')
		.action(async (name: string, options: PlacementOptions & { json?: boolean }) => {
			const info = await cli.call('skills/get', { name, ...(await placementOfInstalled(cli, name, options)) });
			if (options.json) return printJson(info);
			const skill = info.installed_skill!;
			const lines = [
				['name', skill.metadata?.name],
				['description', skill.metadata?.description],
				['version', skill.metadata?.version],
				['scope', skill.scope === 'project' ? `project ${skill.project_root}` : skill.scope],
				['reference', skill.reference],
				['digest', skill.digest],
				['clients', skill.clients?.join(', ')],
				['dependencies', skill.dependencies?.map((dependency) => dependency.name).join(', ')],
				['installed', skill.installed_at],
			];
			for (const [label, value] of lines) if (value) process.stdout.write(`${label!.padEnd(13)}${value}\n`);
		});
}

function uninstallSkill(skill: Command, cli: Cli): Command {
	return withPlacement(skill.command('rm').alias('uninstall').description('Uninstall a skill from every client folder (or one client\'s)').argument('<name>'))
		.option('-c, --client <id>', 'only from this client; the skill stays for the others')
		.action(async (name: string, options: PlacementOptions & { client?: string }) => {
			await cli.call('skills/uninstall', { name, ...(await placementOfInstalled(cli, name, options)), ...(options.client && { client: options.client as ClientApp }) });
			process.stdout.write(options.client ? `Uninstalled ${name} for ${options.client}.\n` : `Uninstalled ${name}.\n`);
		});
}

function buildSkill(skill: Command, cli: Cli): Command {
	return skill
		.command('build')
		.description('Pack a skill folder into a local OCI build (reproducible)')
		.argument('<path>', 'the skill folder')
		.option('-t, --tag <tag>', 'tag, e.g. ghcr.io/org/my-skill:1.0.0 (default: the skill name)')
		.action(async (path: string, options: { tag?: string }) => {
			const { reference } = await cli.call('skills/build', { path: resolve(path), ...(options.tag && { tag: options.tag }) });
			process.stdout.write(`${reference}\n`);
		});
}

function listSkillBuilds(skill: Command, cli: Cli): Command {
	return skill
		.command('builds')
		.description('List local builds')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const { builds } = await cli.call('skills/listBuilds', {});
			if (options.json) return printJson(builds);
			printTable(builds, { tag: (b) => b.tag, name: (b) => b.name, version: (b) => b.version || undefined, digest: (b) => b.digest?.slice(0, 19) }, 'No local builds.');
		});
}

function deleteSkillBuild(skill: Command, cli: Cli): Command {
	return skill
		.command('rm-build')
		.description('Delete a local build')
		.argument('<tag>')
		.action(async (tag: string) => {
			await cli.call('skills/deleteBuild', { tag });
			process.stdout.write(`Deleted build ${tag}.\n`);
		});
}

function pushSkill(skill: Command, cli: Cli): Command {
	return skill
		.command('push')
		.description('Push a local build to its registry (credentials from docker login)')
		.argument('<reference>', 'a local build tag naming a registry, e.g. ghcr.io/org/my-skill:1.0.0')
		.option('--no-sign', 'push unsigned (Hangar does not sign skills)')
		.action(async (reference: string) => {
			await cli.call('skills/push', { reference, no_sign: true });
			process.stdout.write(`Pushed ${reference}.\n`);
		});
}

function syncSkills(skill: Command, cli: Cli): Command {
	return withProject(
		skill.command('sync').description('Install exactly the skills pinned in the project\'s hangar.lock.yaml (or toolhive.lock.yaml)'),
		'the project (default: the git work tree around the current folder)',
	)
		.option('-c, --client <id>', 'client to install for (repeatable; default: those the lock file records, else all detected)', collect)
		.option('--check', 'only report differences (exit code 2 when there are any)')
		.option('--prune', 'uninstall project skills that are not in the lock file')
		.option('--adopt', 'add project skills that are not in the lock file to it')
		.option('--json', 'print JSON')
		.action(async (options: PlacementOptions & { client?: string[]; check?: boolean; prune?: boolean; adopt?: boolean; json?: boolean }) => {
			const projectRoot = (await namedProject({ ...options, project: options.project ?? true }))!;
			const result = await cli.call('skills/sync', {
				project_root: projectRoot,
				...(options.client && { clients: options.client as ClientApp[] }),
				...(options.check && { check: true }),
				...(options.prune && { prune: true }),
				...(options.adopt && { adopt: true }),
			});
			if (options.json) printJson(result);
			else {
				const { skills } = await cli.call('skills/list', { project_root: projectRoot });
				const clientsOf = new Map(skills.map((installed) => [installed.metadata?.name, installed.clients ?? []]));
				const rows = syncOutcomes(result).flatMap((row) => {
					const clients = clientsOf.get(row.name);
					return (clients?.length ? clients : [undefined]).map((client) => ({ ...row, client }));
				});
				printTable(rows, { skill: (row) => row.name, client: (row) => row.client, outcome: (row) => row.outcome, detail: (row) => row.detail }, 'No skills in the lock file.');
			}
			if (result.failed?.length) process.exitCode = 1;
			else if (options.check && (result.missing?.length || result.drifted?.length || result.removed_from_lock?.length)) process.exitCode = 2;
		});
}

function upgradeSkills(skill: Command, cli: Cli): Command {
	return withProject(
		skill.command('upgrade').description('Re-resolve the sources in hangar.lock.yaml and upgrade skills whose source moved').argument('[names...]', 'only these skills'),
		'the project (default: the git work tree around the current folder)',
	)
		.option('-c, --client <id>', 'client to install for (repeatable; default: those the lock file records, else all detected)', collect)
		.option('--preview', 'report what would change, change nothing')
		.option('--fail-on-changes', 'like --preview, and exit with code 2 when something would change')
		.option('--allow-ref-change', 'follow a source that now resolves to another reference')
		.option('--json', 'print JSON')
		.action(async (names: string[], options: PlacementOptions & { client?: string[]; preview?: boolean; failOnChanges?: boolean; allowRefChange?: boolean; json?: boolean }) => {
			const { outcomes = [] } = await cli.call('skills/upgrade', {
				project_root: (await namedProject({ ...options, project: options.project ?? true }))!,
				...(names.length && { names }),
				...(options.client && { clients: options.client as ClientApp[] }),
				...(options.preview && { preview: true }),
				...(options.failOnChanges && { fail_on_changes: true }),
				...(options.allowRefChange && { allow_ref_change: true }),
			});
			const preview = options.preview || options.failOnChanges;
			if (options.json) printJson(outcomes);
			else
				printTable(
					outcomes,
					{
						name: (o) => o.name,
						status: (o) => (preview && o.status === 'upgraded' ? 'would upgrade' : o.status),
						from: (o) => o.old_digest?.slice(0, 19),
						to: (o) => o.new_digest?.slice(0, 19),
						detail: (o) => upgradeDetail(o, preview ?? false),
					},
					'Nothing to upgrade.',
				);
			if (outcomes.some((outcome) => outcome.status === 'failed')) process.exitCode = 1;
			else if (options.failOnChanges && outcomes.some((outcome) => outcome.status === 'upgraded')) process.exitCode = 2;
		});
}

type SyncOutcome = 'installed' | 'updated' | 'unchanged' | 'drifted' | 'missing' | 'failed' | 'pruned' | 'unlocked' | 'unmanaged';

/**
 * One outcome per skill of a sync. The API keeps ToolHive's lists, where a skill found drifted
 * and then reinstalled is in both `drifted` and `installed`: here it is `updated`, once.
 */
function syncOutcomes(result: SkillSyncResult): { name: string; outcome: SyncOutcome; detail?: string }[] {
	const rows = new Map<string, { name: string; outcome: SyncOutcome; detail?: string }>();
	const put = (name: string, outcome: SyncOutcome, detail?: string) => {
		if (!rows.has(name)) rows.set(name, { name, outcome, ...(detail && { detail }) });
	};
	const installed = new Set(result.installed);
	for (const failure of result.failed ?? []) put(failure.name, 'failed', failure.error);
	for (const name of result.drifted ?? []) put(name, installed.has(name) ? 'updated' : 'drifted', installed.has(name) ? 'reinstalled at the locked pin' : 'differs from the lock file');
	for (const name of result.missing ?? []) put(name, installed.has(name) ? 'installed' : 'missing');
	for (const name of installed) put(name, 'installed');
	for (const name of result.already_current ?? []) put(name, 'unchanged');
	for (const name of result.pruned ?? []) put(name, 'pruned', 'not in the lock file');
	for (const name of result.removed_from_lock ?? []) put(name, 'unlocked', 'not in the lock file: --prune removes it, --adopt adds it');
	for (const name of result.never_managed ?? []) put(name, 'unmanaged', 'a skill folder Hangar did not write');
	return [...rows.values()].sort((a, b) => compareNames(a.name, b.name));
}

/** What a row of `skill upgrade` needs said: why it failed or is held back, where it moves. */
function upgradeDetail(outcome: NonNullable<SkillUpgradeResult['outcomes']>[number], preview: boolean): string | undefined {
	switch (outcome.status) {
		case 'failed':
			return preview ? `cannot check: ${outcome.error}` : outcome.error;
		case 'not-upgradable':
			return 'the source names a digest or commit';
		case 'ref-change-blocked':
			return `the source now resolves to ${outcome.new_resolved_reference}; --allow-ref-change follows it`;
		default:
			return outcome.new_resolved_reference;
	}
}

function skillCommand(program: Command, cli: Cli): Command {
	const skill = program.command('skill').description('Install agent skills (SKILL.md folders) into clients, per user or per project');
	addCommands(skill, cli, [validateSkill, showSkillContent, installSkill, listSkills, showSkill, uninstallSkill, buildSkill, listSkillBuilds, deleteSkillBuild, pushSkill, syncSkills, upgradeSkills]);
	return skill;
}

/** The area's top-level command. */
export const skillCommands: readonly CommandFactory[] = [skillCommand];
