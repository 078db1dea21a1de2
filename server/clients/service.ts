/**
 * Clients: which MCP clients are installed, which are registered into which groups, and the
 * sync that keeps each registered client's configuration listing exactly the running
 * workloads of its groups.
 *
 * Membership lives in the group records (`registered_clients`); clients registered without
 * groups, per-project registrations and the ledger of entries Hangar wrote live in the clients
 * state document. Every configuration file is rewritten under a lock named after it, and what
 * it should list is computed inside that lock, so concurrent registrations never lose each
 * other's entries.
 */
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import { throughAggregates } from '../../protocol/aggregateImage.js';
import { noProjectFileMessage, unsupportedClientMessage } from '../../protocol/clientApps.js';
import type { ClientAppStatus, RegisteredClient } from '../../protocol/protocol.clients.js';
import { implement, type Implementation } from '../dispatch.js';
import type { Environment } from '../environment.js';
import type { GroupStore, StoredGroup } from '../groups/store.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import { sha256Hex } from '../hash.js';
import type { JsonDocument } from '../store/document.js';
import { withLock } from '../store/lock.js';
import type { HangarPaths } from '../store/paths.js';
import { projectRoot, recordedProjectRoot } from '../store/project.js';
import { configProblem, readConfig } from './configFile.js';
import { editConfigFile, editWorkloadFiles } from './configEdit.js';
import { openEditor } from './editor.js';
import { clientsStateDocument, type ClientsState } from './state.js';
import {
	CLIENT_TABLE,
	clientDefinition,
	detectionTarget,
	isInstalled,
	userConfigPath,
	type ClientDefinition,
	type ConfigShape,
} from './table.js';
import type { RunningWorkloads, WorkloadEndpoint } from './workloads.js';
import { compareNames } from '../order.js';

export interface ClientsServiceOptions {
	/** The home directory client configurations live under. Default: the user's. */
	readonly home?: string;
	readonly platform?: NodeJS.Platform;
}

/** One configuration file Hangar keeps in sync, or a folder of one file per workload. */
interface Target {
	/** The file; for a folder of one file per workload, their path with `*` for the workload's name. */
	readonly path: string;
	readonly shape: ConfigShape;
	readonly client: string;
	readonly projectRoot?: string;
	/** Present for a folder of one file per workload: what a new file starts with. */
	readonly newFile?: (workload: string) => string;
}

/** Which workloads a target should list: all of them, or those of some groups. */
interface Binding extends Target {
	readonly all: boolean;
	readonly groups: ReadonlySet<string>;
}

export class ClientsService {
	private readonly state: JsonDocument<ClientsState>;
	private readonly home: string;
	private readonly platform: NodeJS.Platform;

	constructor(
		private readonly environment: Environment,
		private readonly groups: GroupStore,
		private readonly workloads: RunningWorkloads,
		options: ClientsServiceOptions = {},
	) {
		this.state = clientsStateDocument(environment.paths);
		this.home = options.home ?? homedir();
		this.platform = options.platform ?? process.platform;
	}

	/** Registered clients: one item per client registered user-wide, one per project registration. */
	async list(): Promise<RegisteredClient[]> {
		const [groups, state] = await Promise.all([this.groups.list(), this.state.read()]);
		const clients: RegisteredClient[] = [];
		for (const client of sortedClients()) {
			const memberOf = groupsOf(client.id, groups);
			if (memberOf.length || state.global.includes(client.id)) clients.push({ name: client.id, groups: memberOf });
		}
		for (const project of state.projects) {
			clients.push({
				name: project.client as RegisteredClient['name'],
				groups: [...project.groups],
				project_root: project.project_root,
			});
		}
		return clients;
	}

	/** Every client Hangar knows, installed here or not (toolhive-facts §4.2). */
	async discover(): Promise<ClientAppStatus[]> {
		const [groups, state] = await Promise.all([this.groups.list(), this.state.read()]);
		return Promise.all(
			CLIENT_TABLE.map(async (client) => ({
				client_type: client.id,
				installed: await isInstalled(
					client,
					this.home,
					this.platform,
					state.created?.includes(detectionTarget(client, this.home, this.platform)) ?? false,
				),
				registered: state.global.includes(client.id) || groupsOf(client.id, groups).length > 0,
				supports_skills: client.skills !== undefined,
				supports_plugins: client.supportsPlugins,
			})),
		);
	}

	/**
	 * Registers a client into groups (`default` when none are given), user-wide or, with
	 * `projectRoot`, into that project's configuration, and writes the running workloads of
	 * those groups into it.
	 */
	async register(name: string, groupNames: readonly string[] | undefined, projectRoot?: string): Promise<RegisteredClient> {
		const client = this.client(name);
		const groups = unique(groupNames?.length ? groupNames : [DEFAULT_GROUP]);
		await this.requireGroups(groups);
		if (projectRoot !== undefined) {
			const root = await this.projectRoot(projectRoot);
			const target = this.projectTarget(client, root);
			await this.check(target);
			await this.state.update((state) => {
				const existing = state.projects.find((project) => project.client === client.id && project.project_root === root);
				const projects = existing
					? state.projects.map((project) =>
							project === existing ? { ...project, groups: unique([...project.groups, ...groups]) } : project,
						)
					: [...state.projects, { client: client.id, project_root: root, groups }];
				return [{ ...state, projects }, undefined];
			});
			await this.sync(target);
			return { name: client.id, groups, project_root: root };
		}
		const target = this.userTarget(client);
		await this.check(target);
		for (const group of groups) await this.groups.update(group, (record) => withClient(record, client.id));
		await this.sync(target);
		return { name: client.id, groups };
	}

	/**
	 * Registers several clients. With groups, into each of them; without, the legacy global
	 * way: the clients list every running workload (as ToolHive's bulk endpoint does).
	 */
	async registerMany(names: readonly string[], groupNames: readonly string[] | undefined): Promise<RegisteredClient[]> {
		const clients = unique(names).map((name) => this.client(name));
		const groups = unique(groupNames ?? []);
		await this.requireGroups(groups);
		for (const client of clients) await this.check(this.userTarget(client));
		if (groups.length) {
			for (const group of groups)
				await this.groups.update(group, (record) => clients.reduce((next, client) => withClient(next, client.id), record));
		} else {
			await this.state.update((state) => [
				{ ...state, global: unique([...state.global, ...clients.map((client) => client.id)]) },
				undefined,
			]);
		}
		for (const client of clients) await this.sync(this.userTarget(client));
		return clients.map((client) => ({ name: client.id }));
	}

	/** Unregisters a client from every group (user-wide), or from a project, and removes its entries. */
	async unregister(name: string, projectRoot?: string): Promise<void> {
		const client = this.client(name);
		if (projectRoot !== undefined) {
			const root = await recordedProjectRoot(projectRoot);
			const target = this.projectTarget(client, root);
			await this.checkManaged(target);
			await this.state.update((state) => [
				{
					...state,
					projects: state.projects.filter((project) => !(project.client === client.id && project.project_root === root)),
				},
				undefined,
			]);
			await this.sync(target);
			return;
		}
		const target = this.userTarget(client);
		await this.checkManaged(target);
		for (const group of await this.groups.list()) {
			if (group.registered_clients.includes(client.id))
				await this.groups.update(group.name, (record) => withoutClient(record, client.id));
		}
		await this.state.update((state) =>
			state.global.includes(client.id)
				? [{ ...state, global: state.global.filter((id) => id !== client.id) }, undefined]
				: [undefined, undefined],
		);
		await this.sync(target);
	}

	/** Unregisters a client from one group (user-wide or in a project), removing only that group's entries. */
	async unregisterFromGroup(name: string, group: string, projectRoot?: string): Promise<void> {
		const client = this.client(name);
		await this.requireGroups([group]);
		if (projectRoot !== undefined) {
			const root = await recordedProjectRoot(projectRoot);
			const target = this.projectTarget(client, root);
			await this.checkManaged(target);
			await this.state.update((state) => {
				const projects = state.projects
					.map((project) =>
						project.client === client.id && project.project_root === root
							? { ...project, groups: project.groups.filter((g) => g !== group) }
							: project,
					)
					.filter((project) => project.groups.length > 0);
				return [{ ...state, projects }, undefined];
			});
			await this.sync(target);
			return;
		}
		const target = this.userTarget(client);
		await this.checkManaged(target);
		await this.groups.update(group, (record) => withoutClient(record, client.id));
		await this.sync(target);
	}

	/** Unregisters several clients: from the given groups, or entirely. */
	async unregisterMany(names: readonly string[], groupNames: readonly string[] | undefined): Promise<void> {
		const groups = unique(groupNames ?? []);
		await this.requireGroups(groups);
		for (const name of unique(names)) {
			if (groups.length === 0) await this.unregister(name);
			else for (const group of groups) await this.unregisterFromGroup(name, group);
		}
	}

	/**
	 * The hook the workloads service calls when a workload starts, stops, is deleted or moves
	 * port: every registered client's configuration (user-wide and per project) is brought to
	 * list exactly the running workloads of its groups. A file that cannot be edited (the
	 * user broke it) is reported in the log and left as it is; the others are still updated.
	 */
	async syncWorkloads(): Promise<void> {
		const [state, groups] = await Promise.all([this.state.read(), this.groups.list()]);
		const targets = new Map<string, Target>();
		for (const binding of this.bindings(state, groups)) targets.set(binding.path, binding);
		for (const file of state.managed) {
			const client = clientDefinition(file.client);
			if (!client || targets.has(file.path) || file.entries.length === 0) continue;
			targets.set(
				file.path,
				file.project_root === undefined ? this.userTarget(client) : this.projectTarget(client, file.project_root),
			);
		}
		for (const target of targets.values()) {
			try {
				await this.sync(target);
			} catch (error) {
				this.environment.log.warn(`could not update ${target.client}'s configuration: ${(error as Error).message}`);
			}
		}
	}

	/**
	 * Brings one configuration file (or folder of one file per workload) to list exactly what its
	 * registrations ask for, under the file's lock. The ledger is widened before the file is written and narrowed after, so a
	 * crash in between can only leave Hangar believing it owns an entry it wrote.
	 */
	private async sync(target: Target): Promise<void> {
		await withLock(this.lockFor(target.path), async () => {
			const [running, state, groups] = await Promise.all([this.workloads.list(), this.state.read(), this.groups.list()]);
			const desired = this.desired(target.path, running, state, groups);
			const managed = new Set(state.managed.find((file) => file.path === target.path)?.entries ?? []);
			if (desired.length === 0 && managed.size === 0) return;
			const { path, shape, newFile, projectRoot } = target;
			const edit = newFile
				? await editWorkloadFiles({ pattern: path, shape, newFile, projectRoot }, desired, managed)
				: await editConfigFile(path, shape, desired, managed, projectRoot);
			for (const skipped of edit.skipped) {
				this.environment.log.warn(`${skipped.path} already has an entry "${skipped.name}" that Hangar did not write; left it as it is`);
			}
			if (edit.changed) {
				await this.recordManaged(target, unique([...managed, ...edit.managed]));
				await this.recordCreated(target);
				await edit.write();
			}
			await this.recordManaged(target, edit.managed);
		});
	}

	/** The running workloads a file should list: the union over every registration that writes to it, a group's aggregate instead of its members. */
	private desired(
		path: string,
		running: readonly WorkloadEndpoint[],
		state: ClientsState,
		groups: readonly StoredGroup[],
	): WorkloadEndpoint[] {
		const bindings = this.bindings(state, groups).filter((binding) => binding.path === path);
		const bound = running.filter((workload) => bindings.some((binding) => binding.all || binding.groups.has(workload.group)));
		return throughAggregates(bound, (workload) => workload.group, (workload) => workload.aggregates);
	}

	private bindings(state: ClientsState, groups: readonly StoredGroup[]): Binding[] {
		const bindings: Binding[] = [];
		for (const client of CLIENT_TABLE) {
			const memberOf = groupsOf(client.id, groups);
			const all = state.global.includes(client.id);
			if (all || memberOf.length) bindings.push({ ...this.userTarget(client), all, groups: new Set(memberOf) });
		}
		for (const project of state.projects) {
			const client = clientDefinition(project.client);
			if (client?.project)
				bindings.push({ ...this.projectTarget(client, project.project_root), all: false, groups: new Set(project.groups) });
		}
		return bindings;
	}

	private async recordManaged(target: Target, entries: readonly string[]): Promise<void> {
		await this.state.update((state) => {
			const current = state.managed.find((file) => file.path === target.path);
			if (sameSet(current?.entries ?? [], entries)) return [undefined, undefined];
			const others = state.managed.filter((file) => file !== current);
			const record = {
				path: target.path,
				client: target.client,
				entries: [...entries].sort(),
				...(target.projectRoot === undefined ? {} : { project_root: target.projectRoot }),
			};
			return [{ ...state, managed: entries.length ? [...others, record] : others }, undefined];
		});
	}

	/** Remembers a user-wide detection target this write is about to create (see `isInstalled`). */
	private async recordCreated(target: Target): Promise<void> {
		const client = clientDefinition(target.client);
		if (target.projectRoot !== undefined || !client) return;
		const detected = detectionTarget(client, this.home, this.platform);
		if (await exists(detected)) return;
		await this.state.update((state) =>
			state.created?.includes(detected) ? [undefined, undefined] : [{ ...state, created: [...(state.created ?? []), detected] }, undefined],
		);
	}

	/**
	 * Fails (and changes nothing) when the client's file exists but Hangar could not edit it, or
	 * a project's is not confined to it (for a folder of one file per workload, the folder).
	 */
	private async check(target: Target): Promise<void> {
		const { text } = await readConfig(target.path, target.projectRoot);
		try {
			(await openEditor(text, target.shape)).entries();
		} catch (error) {
			throw configProblem(target.path, error);
		}
	}

	/** `check`, when Hangar has entries in the file to remove. */
	private async checkManaged(target: Target): Promise<void> {
		const state = await this.state.read();
		if (state.managed.some((file) => file.path === target.path && file.entries.length > 0)) await this.check(target);
	}

	private client(name: string): ClientDefinition {
		const client = clientDefinition(name);
		if (!client) throw HangarError.badRequest(unsupportedClientMessage(name), 'unsupported_client_type');
		return client;
	}

	private async requireGroups(groups: readonly string[]): Promise<void> {
		for (const group of groups) await this.groups.get(group);
	}

	private projectRoot(path: string): Promise<string> {
		return projectRoot(path);
	}


	private userTarget(client: ClientDefinition): Target {
		return { path: userConfigPath(client, this.home, this.platform), shape: client.config, client: client.id };
	}

	private projectTarget(client: ClientDefinition, root: string): Target {
		if (!client.project) throw HangarError.badRequest(`invalid project_root: ${noProjectFileMessage(client.id)}`, 'invalid_project_root');
		return {
			path: join(root, ...client.project.configPath.split('/')),
			shape: client.project.config,
			client: client.id,
			projectRoot: root,
			...(client.project.newFile ? { newFile: client.project.newFile } : {}),
		};
	}

	private lockFor(path: string): string {
		return configLockTarget(this.environment.paths, path);
	}
}

/**
 * The lock every process takes to rewrite one client configuration file. Locks live in
 * Hangar's state folder: taking one must not create folders in the client's (that would make
 * the client look installed).
 */
export function configLockTarget(paths: HangarPaths, configPath: string): string {
	return join(paths.state, 'client-config-locks', sha256Hex(configPath).slice(0, 32));
}

function sortedClients(): ClientDefinition[] {
	return [...CLIENT_TABLE].sort((a, b) => compareNames(a.id, b.id));
}

function groupsOf(client: string, groups: readonly StoredGroup[]): string[] {
	return groups.filter((group) => group.registered_clients.includes(client)).map((group) => group.name);
}

function withClient(group: StoredGroup, client: string): StoredGroup {
	return group.registered_clients.includes(client)
		? group
		: { ...group, registered_clients: [...group.registered_clients, client] };
}

function withoutClient(group: StoredGroup, client: string): StoredGroup {
	return { ...group, registered_clients: group.registered_clients.filter((name) => name !== client) };
}

function unique<T>(values: Iterable<T>): T[] {
	return [...new Set(values)];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
	return a.length === b.length && a.every((value) => b.includes(value));
}

/** The clients rows of the operation table. */
export function clientImplementations(clients: ClientsService): Implementation[] {
	return [
		implement('clients/list', () => clients.list()),
		implement('clients/register', ({ name, groups, project_root }) => clients.register(name, groups, project_root)),
		implement('clients/registerMany', ({ names, groups }) => clients.registerMany(names, groups)),
		implement('clients/unregister', async ({ name, project_root }) => {
			await clients.unregister(name, project_root);
			return null;
		}),
		implement('clients/unregisterFromGroup', async ({ name, group, project_root }) => {
			await clients.unregisterFromGroup(name, group, project_root);
			return null;
		}),
		implement('clients/unregisterMany', async ({ names, groups }) => {
			await clients.unregisterMany(names, groups);
			return null;
		}),
		implement('clients/discover', async () => ({ clients: await clients.discover() })),
	];
}

async function exists(path: string): Promise<boolean> {
	try {
		await stat(path);
		return true;
	} catch {
		return false;
	}
}
