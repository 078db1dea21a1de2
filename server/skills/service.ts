/**
 * The skills service: validate, read by reference, install, list, inspect and uninstall
 * skills per client, user or project; build, list, delete and push local builds; and keep a
 * project's lock file (sync, upgrade).
 *
 * Listing and inspecting installed skills read their records only: what installs, fetches,
 * builds and pushes (the workshop: registry client, sources, builds, installer) and a
 * project's sync and upgrade load on the first call that needs them.
 */
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { ValidParamsOf } from '../../protocol/operation.js';
import type {
	BuildSkill,
	GetSkill,
	InstallSkill,
	ListSkills,
	PushSkill,
	UninstallSkill,
	ValidateSkill,
	InstalledSkill,
	SkillContent,
	SkillInfo,
} from '../../protocol/protocol.skills.js';
import type { OperationContext, ProgressReporter } from '../context.js';
import { implement, type Implementation } from '../dispatch.js';
import type { Environment } from '../environment.js';
import type { GroupStore } from '../groups/store.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import type { RegistryClient } from '../oci/client.js';
import type { SkillBuilds } from './builds.js';
import type { InstallOutcome, SkillInstaller } from './installer.js';
import { hasPendingWork } from './pending.js';
import type { ProjectSkillService, SkillProjects } from './projects.js';
import type { SkillCatalog, SkillSources } from './sources.js';
import { SkillRecords, toInstalledSkill } from './store.js';
import { homeOf } from '../store/paths.js';
import { recordedProjectRoot } from '../store/project.js';
import { chooseClients, lookupPlacement, placementOf, type Placement } from './targets.js';
import { compareNames } from '../order.js';

export type { SkillCatalog } from './sources.js';

/** What installs, fetches, builds and pushes skills. */
export interface SkillWorkshop {
	readonly client: RegistryClient;
	readonly builds: SkillBuilds;
	readonly sources: SkillSources;
	readonly installer: SkillInstaller;
}

export interface SkillServiceOptions {
	readonly env?: NodeJS.ProcessEnv;
}

export class SkillService implements ProjectSkillService {
	readonly records: SkillRecords;
	private readonly home: string;
	private readonly env: NodeJS.ProcessEnv;
	private workshopMade: Promise<SkillWorkshop> | undefined;
	private projectsMade: Promise<SkillProjects> | undefined;

	constructor(
		private readonly environment: Environment,
		private readonly groups: GroupStore,
		private readonly catalog: SkillCatalog,
		options: SkillServiceOptions = {},
	) {
		this.env = options.env ?? process.env;
		this.home = homeOf(this.env);
		this.records = new SkillRecords(environment.paths);
	}

	/** The workshop, made on first use. */
	workshop(): Promise<SkillWorkshop> {
		return (this.workshopMade ??= (async () => {
			const [{ RegistryClient }, { SkillBuilds }, { SkillSources }, { SkillInstaller }] = await Promise.all([
				import('../oci/client.js'),
				import('./builds.js'),
				import('./sources.js'),
				import('./installer.js'),
			]);
			const { paths } = this.environment;
			const client = new RegistryClient({ env: this.env });
			const builds = new SkillBuilds(paths, this.env);
			const sources = new SkillSources(paths, client, builds, this.catalog, this.env);
			return { client, builds, sources, installer: new SkillInstaller(paths, this.records, sources, this.home, this.env) };
		})());
	}

	/** A project's sync and upgrade, made on first use. */
	projects(): Promise<SkillProjects> {
		return (this.projectsMade ??= Promise.all([import('./projects.js'), this.workshop()]).then(([{ SkillProjects }, workshop]) => new SkillProjects(this, workshop)));
	}

	/** Finishes what a process that died left half done, if it left anything. */
	async recover(): Promise<void> {
		if (await hasPendingWork(this.environment.paths)) await (await this.workshop()).installer.recover();
	}

	async validate(params: ValidParamsOf<typeof ValidateSkill>) {
		const { validateInlineSkill, validateSkillFolder } = await import('./validate.js');
		const check = params.path !== undefined ? await validateSkillFolder(params.path) : await validateInlineSkill(params.skill_md ?? '', params.files);
		return { valid: check.valid, errors: check.errors, warnings: check.warnings };
	}

	/** Reads a skill by reference into a scratch folder and describes it; nothing is installed. */
	async content(ref: string, context: OperationContext): Promise<SkillContent> {
		const { installer, sources } = await this.workshop();
		return this.withProgress(context, `Reading ${ref}`, (progress) =>
			installer.withScratch(async (folder) => {
				const source = await sources.resolve(ref, undefined, context.signal);
				const fetched = await sources.fetch(source, join(folder, 'skill'), context.signal, progress);
				return {
					name: fetched.name,
					description: fetched.fields.description ?? '',
					version: fetched.fields.version ?? '',
					license: fetched.fields.license ?? '',
					body: fetched.skillMd,
					files: fetched.files.map(({ path, size }) => ({ path, size })),
				};
			}),
		);
	}

	async install(params: ValidParamsOf<typeof InstallSkill>, context: OperationContext): Promise<{ skill: InstalledSkill; unsigned?: boolean; warnings?: string[] }> {
		await this.recover();
		const { installer, sources } = await this.workshop();
		const placement = await placementOf(params.scope, params.project_root);
		const group = params.group ?? DEFAULT_GROUP;
		await this.groups.get(group);
		const clients = await chooseClients(params.clients, this.home);
		return this.withProgress(context, `Installing ${params.name}`, async (progress) => {
			const source = await sources.resolve(params.name, params.version, context.signal);
			const outcome = await installer.install(
				{ source, requested: params.name, placement, clients, force: params.force ?? false, explicit: true },
				{ signal: context.signal, progress },
			);
			await this.addToGroup(group, outcome.record.name);
			this.announce(outcome, placement);
			return {
				skill: toInstalledSkill(outcome.record),
				...(outcome.record.managed && { unsigned: true }),
				...(outcome.warnings.length && { warnings: [...outcome.warnings] }),
			};
		});
	}

	async list(params: ValidParamsOf<typeof ListSkills>): Promise<{ skills: InstalledSkill[] }> {
		await this.recover();
		const scope = params.scope ?? (params.project_root ? 'project' : undefined);
		const projectRoot = params.project_root && (await recordedProjectRoot(params.project_root));
		const members = params.group ? new Set((await this.groups.get(params.group)).skills) : undefined;
		const records = (await this.records.list()).filter(
			(record) =>
				(!scope || record.scope === scope) &&
				(!projectRoot || record.project_root === projectRoot) &&
				(!params.client || record.folders.some((folder) => folder.clients.includes(params.client!))) &&
				(!members || members.has(record.name)),
		);
		records.sort((a, b) => compareNames(a.name, b.name) || compareNames(a.scope, b.scope) || compareNames(a.project_root, b.project_root));
		return { skills: records.map(toInstalledSkill) };
	}

	async get(params: ValidParamsOf<typeof GetSkill>): Promise<SkillInfo> {
		await this.recover();
		const placement = await lookupPlacement(params.scope, params.project_root);
		const record = await this.records.get(placement, params.name);
		if (!record) throw HangarError.notFound(`skill ${params.name} is not installed${placement.scope === 'project' ? ` in ${placement.projectRoot}` : ''}`, 'skill_not_installed');
		const skill = toInstalledSkill(record);
		return { metadata: skill.metadata, installed_skill: skill, ...(record.managed && { unsigned: true }) };
	}

	async uninstall(params: ValidParamsOf<typeof UninstallSkill>, context: OperationContext): Promise<null> {
		await this.recover();
		const placement = await lookupPlacement(params.scope, params.project_root);
		await this.remove(placement, params.name, context.signal, params.client);
		return null;
	}

	/**
	 * Uninstalls a skill (for one client only, with `client`), then — once it is gone for every
	 * client — the dependencies nothing else needs any more.
	 */
	async remove(placement: Placement, name: string, signal: AbortSignal, client?: string): Promise<void> {
		const { installer } = await this.workshop();
		const { removed: record, remaining: kept } = await installer.uninstall(placement, name, signal, client);
		if (kept) {
			// Still installed for other clients: changed in place.
			this.environment.notifier.notify('skills/didChange', { name, scope: placement.scope, ...(placement.projectRoot && { project_root: placement.projectRoot }), change: 'upgraded' });
			return;
		}
		const remaining = await this.records.list();
		if (!remaining.some((other) => other.name === name)) {
			for (const group of await this.groups.list()) {
				if (group.skills.includes(name)) await this.groups.update(group.name, (current) => ({ ...current, skills: current.skills.filter((skill) => skill !== name) }));
			}
		}
		this.environment.notifier.notify('skills/didChange', { name, scope: placement.scope, ...(placement.projectRoot && { project_root: placement.projectRoot }), change: 'uninstalled' });
		for (const dependency of record.dependencies) {
			if (await installer.release(placement, dependency.name, name, signal)) await this.remove(placement, dependency.name, signal);
		}
	}

	async build(params: ValidParamsOf<typeof BuildSkill>): Promise<{ reference: string }> {
		return { reference: await (await this.workshop()).builds.build(params.path, params.tag) };
	}

	async push(params: ValidParamsOf<typeof PushSkill>, context: OperationContext): Promise<null> {
		if (params.key || params.identity_token) {
			throw HangarError.badRequest('Hangar does not sign skills; push with no_sign (the artifact is pushed unsigned)', 'signing_unsupported');
		}
		const { builds, client } = await this.workshop();
		await this.withProgress(context, `Pushing ${params.reference}`, (progress) =>
			builds.push(client, params.reference, context.signal, (message) => progress.report(message)),
		);
		return null;
	}

	/**
	 * Runs `work` between a progress `begin` and `end`; `failedIn` says whether a result that
	 * came back still failed in part (a sync or upgrade with a failed skill ends "failed", not "done").
	 */
	async withProgress<T>(context: OperationContext, title: string, work: (progress: ProgressReporter) => Promise<T>, failedIn?: (result: T) => boolean): Promise<T> {
		context.progress.begin(title);
		let outcome = 'failed';
		try {
			const result = await work(context.progress);
			outcome = failedIn?.(result) ? 'failed' : 'done';
			return result;
		} finally {
			context.progress.end(context.signal.aborted ? 'cancelled' : outcome);
		}
	}

	async addToGroup(group: string, name: string): Promise<void> {
		if ((await this.groups.find(group))?.skills.includes(name)) return;
		await this.groups.update(group, (current) => (current.skills.includes(name) ? current : { ...current, skills: [...current.skills, name] }));
	}

	announce(outcome: InstallOutcome, placement: Placement): void {
		const where = { scope: placement.scope, ...(placement.projectRoot && { project_root: placement.projectRoot }) };
		for (const name of outcome.added) if (name !== outcome.record.name) this.environment.notifier.notify('skills/didChange', { name, ...where, change: 'installed' });
		if (outcome.change !== 'unchanged') this.environment.notifier.notify('skills/didChange', { name: outcome.record.name, ...where, change: outcome.change });
	}

	async chooseClients(clients: readonly string[] | undefined) {
		return chooseClients(clients, this.home);
	}
}

export function skillImplementations(skills: SkillService): Implementation[] {
	return [
		implement('skills/validate', (params) => skills.validate(params)),
		implement('skills/content', ({ ref }, context) => skills.content(ref, context)),
		implement('skills/install', (params, context) => skills.install(params, context)),
		implement('skills/list', (params) => skills.list(params)),
		implement('skills/get', (params) => skills.get(params)),
		implement('skills/uninstall', (params, context) => skills.uninstall(params, context)),
		implement('skills/build', (params) => skills.build(params)),
		implement('skills/push', (params, context) => skills.push(params, context)),
		implement('skills/listBuilds', async () => ({ builds: await (await skills.workshop()).builds.list() })),
		implement('skills/deleteBuild', async ({ tag }) => {
			await (await skills.workshop()).builds.delete(tag);
			return null;
		}),
		implement('skills/sync', async (params, context) => (await skills.projects()).sync(params, context)),
		implement('skills/upgrade', async (params, context) => (await skills.projects()).upgrade(params, context)),
	];
}
