/**
 * The Skills view: one node per local workspace folder (project scope) and one for the user,
 * each listing its installed skills with their status. Refreshed on `skills/didChange`.
 */
import * as vscode from 'vscode';
import { ListSkills, type InstalledSkill } from '../../../protocol/protocol.skills.js';
import type { DaemonSupervisor } from '../daemon.js';
import { scopeParams, skillTargets, type SkillTarget } from '../ui/folders.js';
import { MessageItem } from './messages.js';

export class ScopeItem extends vscode.TreeItem {
	readonly kind = 'scope';

	constructor(readonly target: SkillTarget) {
		super(target.scope === 'user' ? 'User' : target.folder.name, vscode.TreeItemCollapsibleState.Expanded);
		this.description = target.scope === 'user' ? 'every project' : 'project';
		this.tooltip = target.scope === 'user' ? 'Skills installed for your user' : target.project_root;
		this.iconPath = new vscode.ThemeIcon(target.scope === 'user' ? 'account' : 'folder');
		this.contextValue = `scope.${target.scope}`;
		this.id = target.scope === 'user' ? 'scope:user' : `scope:${target.project_root}`;
	}
}

export class SkillItem extends vscode.TreeItem {
	readonly kind = 'skill';

	constructor(
		readonly skill: InstalledSkill,
		readonly target: SkillTarget,
	) {
		const name = skill.metadata?.name ?? skill.reference ?? 'unnamed skill';
		super(name, vscode.TreeItemCollapsibleState.None);
		const status = skill.status ?? 'installed';
		this.description = [skill.metadata?.version, status === 'installed' ? undefined : status, skill.clients?.join(', ')]
			.filter(Boolean)
			.join(' · ');
		this.tooltip = new vscode.MarkdownString(
			[
				`**${name}**${skill.metadata?.version ? ` ${skill.metadata.version}` : ''} — ${status}`,
				skill.metadata?.description,
				skill.reference ? `Source: \`${skill.reference}\`` : undefined,
				skill.digest ? `Digest: \`${skill.digest}\`` : undefined,
				skill.clients?.length ? `Clients: ${skill.clients.join(', ')}` : undefined,
			]
				.filter(Boolean)
				.join('\n\n'),
		);
		this.iconPath = new vscode.ThemeIcon(
			status === 'failed' ? 'error' : status === 'pending' ? 'loading~spin' : 'book',
			status === 'failed' ? new vscode.ThemeColor('errorForeground') : undefined,
		);
		this.contextValue = 'skill';
	}

	/** Name and scope, as `skills/uninstall` takes them. */
	get name(): string {
		return this.skill.metadata?.name ?? '';
	}
}

export type SkillsNode = ScopeItem | SkillItem | MessageItem;

export class SkillsView implements vscode.TreeDataProvider<SkillsNode> {
	private readonly changed = new vscode.EventEmitter<SkillsNode | SkillsNode[] | undefined>();
	readonly onDidChangeTreeData = this.changed.event;
	/** The scope nodes shown, once VS Code has asked for them; kept between refreshes. */
	private scopes: ScopeItem[] | undefined;

	constructor(private readonly daemon: DaemonSupervisor) {}

	/**
	 * Lists each scope's skills again, keeping the scope nodes. A refresh of the whole tree makes
	 * VS Code forget them, and a listing it asked for just then finds no node and stays empty ("No
	 * tree item with id …") until the next refresh. Nothing is fired before the view was first
	 * shown: VS Code would run that refresh alongside the first rendering, with the same result.
	 */
	refresh(): void {
		if (this.scopes) this.changed.fire(this.scopes);
	}

	/** The workspace folders changed: new scope nodes. */
	refreshScopes(): void {
		if (!this.scopes) return;
		this.scopes = undefined;
		this.changed.fire(undefined);
	}

	getTreeItem(node: SkillsNode): vscode.TreeItem {
		return node;
	}

	async getChildren(node?: SkillsNode): Promise<SkillsNode[]> {
		if (!node) return (this.scopes ??= skillTargets().map((target) => new ScopeItem(target)));
		if (node.kind !== 'scope') return [];
		const { target } = node;
		try {
			const { skills } = await this.daemon.request(ListSkills, scopeParams(target));
			if (skills.length === 0) return [MessageItem.empty('No skills installed')];
			return skills
				.map((skill) => new SkillItem(skill, target))
				.sort((a, b) => String(a.label).localeCompare(String(b.label)));
		} catch (error) {
			return [MessageItem.failure(error, 'list skills')];
		}
	}
}
