/**
 * Skill commands: Install Skill…, Uninstall Skill, Show Skill Content, Validate Skill and
 * Sync Skills from Lock File.
 */
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { ListCatalogSkills, type RegistrySkill } from '../../../protocol/protocol.catalog.js';
import {
	GetSkillContent,
	InstallSkill,
	ListSkills,
	SyncSkills,
	UninstallSkill,
	ValidateSkill,
	type SkillSyncResult,
} from '../../../protocol/protocol.skills.js';
import { HangarError } from '../../../protocol/errors.js';
import type { Hangar } from '../hangar.js';
import { skillProblems } from '../problems.js';
import { readSettings } from '../settings.js';
import { pickClients } from '../ui/clients.js';
import { showFailure } from '../ui/errors.js';
import { pickProjectFolder, pickSkillTarget, scopeParams, skillTargets, type SkillTarget } from '../ui/folders.js';
import { withDaemonProgress } from '../ui/progress.js';
import { searchPick, type Choice } from '../ui/search.js';
import { REGISTRY, skillDescription, skillLabel } from '../views/registry.js';
import type { SkillItem } from '../views/skills.js';

/** A skill to install or read: what `skills/install` takes, and what `skills/content` takes. */
export interface SkillSource {
	/** Name, OCI reference or `git://` reference for `skills/install`. */
	readonly name: string;
	/** OCI reference, `git://` reference or local build tag for `skills/content`. */
	readonly ref: string;
}

/** ToolHive's rule: `git://…` is git; a reference with `/`, `:` or `@` is OCI; else a name. */
export function isReference(value: string): boolean {
	return value.startsWith('git://') || /[/:@]/.test(value);
}

/** The installable reference of a registry skill: its OCI artifact, else its git location. */
export function registrySkillSource(skill: RegistrySkill): SkillSource {
	const oci = skill.packages?.find((pkg) => pkg.registryType === 'oci' && pkg.identifier);
	if (oci) return { name: oci.identifier!, ref: oci.identifier! };
	const git = skill.packages?.find((pkg) => pkg.registryType === 'git' && pkg.url);
	if (git) {
		try {
			const url = new URL(git.url!);
			const pin = git.commit || git.ref;
			const ref = `git://${url.host}${url.pathname.replace(/\.git$/, '')}${pin ? `@${pin}` : ''}${git.subfolder ? `#${git.subfolder}` : ''}`;
			return { name: ref, ref };
		} catch {
			// Not a URL: fall back to the name.
		}
	}
	return { name: skill.name, ref: skill.name };
}

/** Skills from the registry as the user types, or the typed text as a reference or name. */
export function pickSkillSource(daemon: Hangar['daemon'], title: string): Promise<SkillSource | undefined> {
	return searchPick<SkillSource>({
		title,
		placeholder: 'Search the registry, or enter an OCI reference (host/repo/name:tag) or git:// reference',
		searchAction: 'search the registry',
		typed: (value) => {
			const text = value.trim();
			if (!text) return [];
			return [
				isReference(text)
					? { label: `$(cloud-download) ${text}`, description: text.startsWith('git://') ? 'git reference' : 'OCI reference', value: { name: text, ref: text } }
					: { label: `$(tag) ${text}`, description: 'skill name (registry or local build)', value: { name: text, ref: text } },
			];
		},
		search: async (query, signal) => {
			const { skills } = await daemon.request(
				ListCatalogSkills,
				{ registryName: REGISTRY, limit: 50, ...(query.trim() && !isReference(query.trim()) ? { q: query.trim() } : {}) },
				{ signal },
			);
			return skills.map(
				(skill): Choice<SkillSource> => ({
					label: skillLabel(skill),
					description: skillDescription(skill),
					detail: skill.description,
					value: registrySkillSource(skill),
				}),
			);
		},
	});
}

function where(target: SkillTarget): string {
	return target.scope === 'user' ? 'your user' : `project ${target.folder.name}`;
}

export async function installSkill(hangar: Hangar, from?: SkillSource): Promise<void> {
	const source = from ?? (await pickSkillSource(hangar.daemon, 'Install Skill'));
	if (!source) return;
	const settings = readSettings();
	const target = await pickSkillTarget(settings.defaultScope, `Install ${source.name} for`);
	if (!target) return;
	const clients = await pickClients(hangar.daemon, settings.defaultClients);
	if (!clients) return;
	const params = { name: source.name, ...scopeParams(target), clients };
	const install = (force?: true) =>
		withDaemonProgress(`Installing skill ${source.name}`, (options) => hangar.daemon.request(InstallSkill, { ...params, ...(force ? { force } : {}) }, options));
	try {
		let result;
		try {
			result = await install();
		} catch (error) {
			if (!(await confirmOverwrite(error))) throw error;
			result = await install(true);
		}
		const name = result.skill.metadata?.name ?? source.name;
		const installedFor = result.skill.clients?.length ? ` for ${result.skill.clients.join(', ')}` : '';
		void vscode.window.showInformationMessage(`Installed skill ${name} into ${where(target)}${installedFor}.`);
	} catch (error) {
		await showFailure(error, `install skill ${source.name}`);
	} finally {
		hangar.skills.refresh();
	}
}

/** A 409 means an unmanaged folder is in the way: the user may overwrite it. */
async function confirmOverwrite(error: unknown): Promise<boolean> {
	if (!(error instanceof HangarError) || error.status !== 409) return false;
	return (await vscode.window.showWarningMessage(error.message, { modal: true }, 'Overwrite')) === 'Overwrite';
}

interface InstalledChoice {
	readonly name: string;
	readonly target: SkillTarget;
}

export async function uninstallSkill(hangar: Hangar, item?: SkillItem): Promise<void> {
	const chosen: InstalledChoice | undefined = item ? { name: item.name, target: item.target } : await pickInstalledSkill(hangar);
	if (!chosen?.name) return;
	const confirmed = await vscode.window.showWarningMessage(
		`Uninstall skill ${chosen.name} from ${where(chosen.target)}?`,
		{ modal: true, detail: 'Its files are removed from every client folder it was installed into.' },
		'Uninstall',
	);
	if (confirmed !== 'Uninstall') return;
	try {
		await hangar.daemon.request(UninstallSkill, { name: chosen.name, ...scopeParams(chosen.target) });
		void vscode.window.showInformationMessage(`Uninstalled skill ${chosen.name} from ${where(chosen.target)}.`);
	} catch (error) {
		await showFailure(error, `uninstall skill ${chosen.name}`);
	} finally {
		hangar.skills.refresh();
	}
}

async function pickInstalledSkill(hangar: Hangar): Promise<InstalledChoice | undefined> {
	const targets = skillTargets();
	let firstFailure: unknown;
	const lists = await Promise.all(
		targets.map(async (target) => {
			try {
				const { skills } = await hangar.daemon.request(ListSkills, scopeParams(target));
				return skills.flatMap((skill) => (skill.metadata?.name ? [{ name: skill.metadata.name, target, skill }] : []));
			} catch (error) {
				firstFailure ??= error;
				return [];
			}
		}),
	);
	const installed = lists.flat();
	if (installed.length === 0) {
		if (firstFailure) await showFailure(firstFailure, 'list installed skills');
		else void vscode.window.showInformationMessage('No skills are installed.');
		return undefined;
	}
	const picked = await vscode.window.showQuickPick(
		installed.map((entry) => ({
			label: entry.name,
			description: entry.target.scope === 'user' ? 'user' : entry.target.folder.name,
			detail: entry.skill.reference,
			entry,
		})),
		{ title: 'Uninstall Skill', placeHolder: 'Installed skill' },
	);
	return picked?.entry;
}

export async function showSkillContent(hangar: Hangar, from?: SkillSource): Promise<void> {
	const source = from ?? (await pickSkillSource(hangar.daemon, 'Show Skill Content'));
	if (!source) return;
	try {
		const content = await withDaemonProgress(`Reading skill ${source.ref}`, (options) =>
			hangar.daemon.request(GetSkillContent, { ref: source.ref }, options),
		);
		const name = content.name || basename(source.ref).replace(/[:@].*$/, '') || 'skill';
		await hangar.documents.show(`/skills/${name}/SKILL.md`, content.body ?? '', 'markdown');
		const files = content.files?.length ? ` (${content.files.length} files)` : '';
		const choice = await vscode.window.showInformationMessage(`Skill ${name}${content.version ? ` ${content.version}` : ''}${files}: not installed.`, 'Install…');
		if (choice === 'Install…') await installSkill(hangar, source);
	} catch (error) {
		await showFailure(error, `read skill ${source.ref}`);
	}
}

/** Validates SKILL.md documents (unsaved edits included) and keeps their problems current. */
export class SkillValidator implements vscode.Disposable {
	private readonly diagnostics = vscode.languages.createDiagnosticCollection('hangar');
	private readonly subscriptions: vscode.Disposable[];
	private readonly pending = new Map<string, NodeJS.Timeout>();

	constructor(private readonly hangar: Hangar) {
		// Once validated, a document is validated again as it changes, until it is closed.
		this.subscriptions = [
			vscode.workspace.onDidChangeTextDocument(({ document }) => {
				if (!this.diagnostics.has(document.uri)) return;
				clearTimeout(this.pending.get(document.uri.toString()));
				this.pending.set(document.uri.toString(), setTimeout(() => void this.validate(document, false), 500));
			}),
			vscode.workspace.onDidCloseTextDocument((document) => this.diagnostics.delete(document.uri)),
		];
	}

	async command(uri?: vscode.Uri): Promise<void> {
		const document = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
		if (!document || basename(document.uri.path) !== 'SKILL.md') {
			void vscode.window.showWarningMessage('Open a SKILL.md file to validate it.');
			return;
		}
		await this.validate(document, true);
	}

	private async validate(document: vscode.TextDocument, announce: boolean): Promise<void> {
		const text = document.getText();
		try {
			const result = await this.hangar.daemon.request(ValidateSkill, { skill_md: text });
			const folderName = document.uri.scheme === 'file' ? basename(dirname(document.uri.fsPath)) : undefined;
			const problems = skillProblems(text, result, folderName);
			this.diagnostics.set(
				document.uri,
				problems.map((problem) => {
					const diagnostic = new vscode.Diagnostic(
						new vscode.Range(problem.line, problem.start, problem.line, problem.end),
						problem.message,
						problem.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
					);
					diagnostic.source = 'hangar';
					return diagnostic;
				}),
			);
			if (!announce) return;
			const errors = problems.filter((problem) => problem.severity === 'error').length;
			const warnings = problems.length - errors;
			if (errors === 0) {
				void vscode.window.showInformationMessage(`SKILL.md is valid${warnings ? ` (${warnings} warning${warnings > 1 ? 's' : ''})` : ''}.`);
			} else {
				void vscode.window.showErrorMessage(`SKILL.md has ${errors} error${errors > 1 ? 's' : ''}; see the Problems view.`);
			}
		} catch (error) {
			if (announce) await showFailure(error, 'validate SKILL.md');
		}
	}

	dispose(): void {
		for (const timer of this.pending.values()) clearTimeout(timer);
		for (const subscription of this.subscriptions) subscription.dispose();
		this.diagnostics.dispose();
	}
}

export async function syncSkills(hangar: Hangar): Promise<void> {
	const folder = await pickProjectFolder('sync skills from its lock file');
	if (!folder) return;
	const clients = await pickClients(hangar.daemon, readSettings().defaultClients);
	if (!clients) return;
	try {
		const result = await withDaemonProgress(`Syncing skills of ${folder.name}`, (options) =>
			hangar.daemon.request(SyncSkills, { project_root: folder.uri.fsPath, clients }, options),
		);
		const summary = syncSummary(result);
		if (result.failed?.length) {
			void vscode.window.showWarningMessage(`Synced ${folder.name}: ${summary}. Failed: ${result.failed.map((entry) => `${entry.name} (${entry.error ?? entry.reason ?? 'unknown'})`).join(', ')}.`);
		} else {
			void vscode.window.showInformationMessage(`Synced ${folder.name}: ${summary}.`);
		}
	} catch (error) {
		await showFailure(error, `sync the skills of ${folder.name}`);
	} finally {
		hangar.skills.refresh();
	}
}

/** "2 installed, 3 already current" — what a sync did (missing and drifted skills are what it installed). */
export function syncSummary(result: SkillSyncResult): string {
	const parts = (
		[
			['installed', result.installed],
			['already current', result.already_current],
			['pruned', result.pruned],
		] as const
	).flatMap(([label, names]) => (names?.length ? [`${names.length} ${label}`] : []));
	return parts.length ? parts.join(', ') : 'nothing to do';
}
