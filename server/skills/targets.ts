/**
 * Where a skill goes: per client and scope, the folder of toolhive-facts §3.4 (from the
 * clients table), with clients that share a folder (`.agents/skills`) folded into one target.
 * Also the project-root rules: absolute, existing, no symlinks, a git work tree.
 */
import { join } from 'node:path';
import type { Scope } from '../../protocol/common.js';
import { HangarError } from '../../protocol/errors.js';
import { CLIENT_TABLE, clientDefinition, isInstalled, type ClientDefinition } from '../clients/table.js';
import { projectRoot, recordedProjectRoot } from '../store/project.js';

/** One folder a skill is written to, and the clients that read it there. */
export interface SkillTarget {
	/** The folder of the skill itself: `<skills dir>/<name>`. */
	readonly folder: string;
	readonly clients: string[];
}

export interface Placement {
	readonly scope: Scope;
	/** Absolute project root for project scope; empty for user scope. */
	readonly projectRoot: string;
}

/** scope defaults to user; a project_root alone means project; project_root with user is a 400. */
export async function placementOf(scope: Scope | undefined, projectRoot: string | undefined): Promise<Placement> {
	const given = givenPlacement(scope, projectRoot);
	return given.scope === 'project' ? { scope: 'project', projectRoot: await checkProjectRoot(given.projectRoot) } : given;
}

/** Where to look a skill up: like `placementOf`, without requiring the project folder to exist. */
export async function lookupPlacement(scope: Scope | undefined, projectRoot: string | undefined): Promise<Placement> {
	const given = givenPlacement(scope, projectRoot);
	return given.scope === 'project' ? { scope: 'project', projectRoot: await recordedProjectRoot(given.projectRoot) } : given;
}

function givenPlacement(scope: Scope | undefined, projectRoot: string | undefined): Placement {
	const effective = scope ?? (projectRoot ? 'project' : 'user');
	if (effective === 'user') {
		if (projectRoot) throw HangarError.badRequest('project_root may only be given with scope "project"', 'invalid_scope');
		return { scope: 'user', projectRoot: '' };
	}
	if (!projectRoot) throw HangarError.badRequest('project_root is required for scope "project"', 'invalid_project_root');
	return { scope: 'project', projectRoot };
}

/** A skills project root: absolute, an existing folder reached without symlinks, a git work tree; returned cleaned. */
export function checkProjectRoot(root: string): Promise<string> {
	return projectRoot(root, { git: true, refuseSymlinks: true });
}

/** The skills folder of a client for a placement (without the skill's name). */
export function skillsDirectory(client: ClientDefinition, placement: Placement, home: string): string | undefined {
	if (!client.skills) return undefined;
	return placement.scope === 'user'
		? join(home, ...client.skills.userDir.split('/'))
		: join(placement.projectRoot, ...client.skills.projectDir.split('/'));
}

/** Every skills folder any client reads for a placement: the only places uninstall may touch. */
export function allSkillsDirectories(placement: Placement, home: string): Set<string> {
	return new Set(CLIENT_TABLE.map((client) => skillsDirectory(client, placement, home)).filter((dir): dir is string => dir !== undefined));
}

/**
 * The clients to install for: the given ids (deduplicated; each must read skills), or — for
 * none or `["all"]` — every skill-reading client installed on this machine.
 */
export async function chooseClients(requested: readonly string[] | undefined, home: string): Promise<ClientDefinition[]> {
	if (requested?.length && !(requested.length === 1 && requested[0] === 'all')) {
		const chosen = [...new Set(requested)].map((id) => clientDefinition(id)!);
		const without = chosen.filter((client) => !client.skills).map((client) => client.id);
		if (without.length) throw HangarError.badRequest(`client ${without.join(', ')} does not support skills`, 'skills_not_supported');
		return chosen;
	}
	const detected: ClientDefinition[] = [];
	for (const client of CLIENT_TABLE) if (client.skills && (await isInstalled(client, home))) detected.push(client);
	if (!detected.length) {
		throw HangarError.badRequest('no supported clients detected on this system; name the clients to install for (clients: ["claude-code"])', 'no_clients');
	}
	return detected;
}

/** One target per distinct folder, in client-table order. */
export function targetsFor(clients: readonly ClientDefinition[], placement: Placement, home: string, name: string): SkillTarget[] {
	const byFolder = new Map<string, string[]>();
	for (const client of clients) {
		const folder = join(skillsDirectory(client, placement, home)!, name);
		byFolder.set(folder, [...(byFolder.get(folder) ?? []), client.id]);
	}
	return [...byFolder].map(([folder, ids]) => ({ folder, clients: ids }));
}
