/**
 * Multi-root workspaces: a project-scoped action runs in the active editor's workspace folder,
 * the only folder, or the folder the user picks, and sends that folder as `project_root`.
 */
import * as vscode from 'vscode';
import type { DefaultScope } from '../settings.js';

export type SkillTarget =
	| { readonly scope: 'user' }
	| { readonly scope: 'project'; readonly project_root: string; readonly folder: vscode.WorkspaceFolder };

/** Workspace folders on this machine's file system, the only ones the daemon can write to. */
export function localFolders(): readonly vscode.WorkspaceFolder[] {
	return (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file');
}

/** The local workspace folder of the active editor's document. */
export function activeFolder(): vscode.WorkspaceFolder | undefined {
	const document = vscode.window.activeTextEditor?.document;
	const folder = document ? vscode.workspace.getWorkspaceFolder(document.uri) : undefined;
	return folder?.uri.scheme === 'file' ? folder : undefined;
}

export function projectTarget(folder: vscode.WorkspaceFolder): SkillTarget {
	return { scope: 'project', project_root: folder.uri.fsPath, folder };
}

/** Every place skills may be installed: each local workspace folder, then the user. */
export function skillTargets(): SkillTarget[] {
	return [...localFolders().map(projectTarget), { scope: 'user' }];
}

/** A target as the skills operations take it (`scope`, and `project_root` for a project). */
export function scopeParams(target: SkillTarget) {
	return target.scope === 'user' ? { scope: 'user' as const } : { scope: 'project' as const, project_root: target.project_root };
}

/** The folder a project action applies to; undefined when there is none or the user backs out. */
export async function pickProjectFolder(purpose: string): Promise<vscode.WorkspaceFolder | undefined> {
	const folders = localFolders();
	if (folders.length === 0) {
		void vscode.window.showWarningMessage(`Open a folder first: Hangar needs a project to ${purpose}.`);
		return undefined;
	}
	const active = activeFolder();
	if (active) return active;
	if (folders.length === 1) return folders[0];
	const picked = await vscode.window.showQuickPick(
		folders.map((folder) => ({ label: folder.name, description: folder.uri.fsPath, folder })),
		{ title: `Which folder? (${purpose})`, placeHolder: 'Workspace folder' },
	);
	return picked?.folder;
}

interface TargetItem extends vscode.QuickPickItem {
	readonly target: SkillTarget;
}

/** Where Install Skill… puts a skill, following `hangar.defaultScope`. */
export async function pickSkillTarget(defaultScope: DefaultScope, title = 'Install for'): Promise<SkillTarget | undefined> {
	if (defaultScope === 'user') return { scope: 'user' };
	if (defaultScope === 'project') {
		const folder = await pickProjectFolder('install the skill into');
		return folder ? projectTarget(folder) : undefined;
	}
	const folders = localFolders();
	if (folders.length === 0) return { scope: 'user' };
	const active = activeFolder();
	const ordered = active ? [active, ...folders.filter((folder) => folder !== active)] : folders;
	const items: TargetItem[] = [
		...ordered.map((folder) => ({
			label: `$(folder) ${folder.name}`,
			description: folder === active ? 'project · active editor' : 'project',
			detail: folder.uri.fsPath,
			target: projectTarget(folder),
		})),
		{ label: '$(account) User', description: 'every project', detail: 'Your home directory', target: { scope: 'user' } },
	];
	return (await vscode.window.showQuickPick(items, { title, placeHolder: 'A workspace folder (project scope) or your user' }))?.target;
}
