/**
 * The Registry view: the default registry's servers and skills, a page at a time ("Load
 * more…"), filtered by a search that the view's title shows.
 */
import * as vscode from 'vscode';
import { ListCatalogServers, ListCatalogSkills, type RegistrySkill, type ServerRecord } from '../../../protocol/protocol.catalog.js';
import type { DaemonSupervisor } from '../daemon.js';
import { MessageItem } from './messages.js';

export const REGISTRY = 'default';
export const PAGE_SIZE = 50;

type Category = 'servers' | 'skills';

export class CategoryItem extends vscode.TreeItem {
	readonly kind = 'category';

	constructor(readonly category: Category) {
		super(category === 'servers' ? 'MCP Servers' : 'Skills', vscode.TreeItemCollapsibleState.Collapsed);
		this.iconPath = new vscode.ThemeIcon(category === 'servers' ? 'server' : 'book');
		this.contextValue = `category.${category}`;
		this.id = `registry:${category}`;
	}
}

/** How a registry server or skill is named and described, in the view and in pickers alike. */
export const serverLabel = (server: ServerRecord) => server.title || server.name;
export const serverDescription = (server: ServerRecord) => [server.title ? server.name : undefined, server.version].filter(Boolean).join(' · ');
export const skillLabel = (skill: RegistrySkill) => skill.title || skill.name;
export const skillDescription = (skill: RegistrySkill) => [skill.namespace, skill.version].filter(Boolean).join(' · ');

export class RegistryServerItem extends vscode.TreeItem {
	readonly kind = 'registryServer';

	constructor(readonly server: ServerRecord) {
		super(serverLabel(server), vscode.TreeItemCollapsibleState.None);
		this.description = serverDescription(server);
		this.tooltip = new vscode.MarkdownString([`**${server.name}**`, server.description].filter(Boolean).join('\n\n'));
		this.iconPath = new vscode.ThemeIcon(server.remotes?.length ? 'globe' : 'package');
		this.contextValue = 'registryServer';
	}
}

export class RegistrySkillItem extends vscode.TreeItem {
	readonly kind = 'registrySkill';

	constructor(readonly skill: RegistrySkill) {
		super(skillLabel(skill), vscode.TreeItemCollapsibleState.None);
		this.description = skillDescription(skill);
		this.tooltip = new vscode.MarkdownString([`**${skill.name}**`, skill.description].filter(Boolean).join('\n\n'));
		this.iconPath = new vscode.ThemeIcon('book');
		this.contextValue = 'registrySkill';
	}
}

export class LoadMoreItem extends vscode.TreeItem {
	readonly kind = 'loadMore';

	constructor(
		readonly category: Category,
		remaining: number,
	) {
		super('Load more…', vscode.TreeItemCollapsibleState.None);
		this.description = `${remaining} more`;
		this.iconPath = new vscode.ThemeIcon('ellipsis');
		this.command = { command: 'hangar.loadMore', title: 'Load More', arguments: [this] };
	}
}

export type RegistryNode = CategoryItem | RegistryServerItem | RegistrySkillItem | LoadMoreItem | MessageItem;

interface Listing {
	items: Array<RegistryServerItem | RegistrySkillItem>;
	/** Pages loaded so far. */
	pages: number;
	total: number;
	error?: unknown;
}

export class RegistryView implements vscode.TreeDataProvider<RegistryNode> {
	private readonly changed = new vscode.EventEmitter<RegistryNode | undefined>();
	readonly onDidChangeTreeData = this.changed.event;
	private readonly roots = { servers: new CategoryItem('servers'), skills: new CategoryItem('skills') };
	private listings = new Map<Category, Listing>();
	private queryValue = '';

	constructor(private readonly daemon: DaemonSupervisor) {}

	/** The current search, `''` for none. */
	get query(): string {
		return this.queryValue;
	}

	search(query: string): void {
		this.queryValue = query.trim();
		this.refresh();
	}

	refresh(): void {
		this.listings = new Map();
		this.changed.fire(undefined);
	}

	async loadMore(item: LoadMoreItem): Promise<void> {
		const listing = this.listings.get(item.category);
		if (!listing) return;
		await this.loadPage(item.category, listing);
		this.changed.fire(this.roots[item.category]);
	}

	getTreeItem(node: RegistryNode): vscode.TreeItem {
		return node;
	}

	async getChildren(node?: RegistryNode): Promise<RegistryNode[]> {
		if (!node) return [this.roots.servers, this.roots.skills];
		if (node.kind !== 'category') return [];
		let listing = this.listings.get(node.category);
		if (!listing) {
			listing = { items: [], pages: 0, total: 0 };
			this.listings.set(node.category, listing);
			await this.loadPage(node.category, listing);
		}
		const children: RegistryNode[] = [...listing.items];
		if (listing.error) children.push(MessageItem.failure(listing.error, `list the registry's ${node.category}`));
		else if (listing.items.length < listing.total) children.push(new LoadMoreItem(node.category, listing.total - listing.items.length));
		else if (listing.items.length === 0) children.push(MessageItem.empty(this.queryValue ? `No ${node.category} match "${this.queryValue}"` : `No ${node.category}`));
		return children;
	}

	private async loadPage(category: Category, listing: Listing): Promise<void> {
		const params = { registryName: REGISTRY, page: listing.pages + 1, limit: PAGE_SIZE, ...(this.queryValue ? { q: this.queryValue } : {}) };
		try {
			if (category === 'servers') {
				const { servers, metadata } = await this.daemon.request(ListCatalogServers, params);
				listing.items.push(...servers.map((server) => new RegistryServerItem(server)));
				listing.total = servers.length ? metadata.total : listing.items.length;
			} else {
				const { skills, metadata } = await this.daemon.request(ListCatalogSkills, params);
				listing.items.push(...skills.map((skill) => new RegistrySkillItem(skill)));
				listing.total = skills.length ? metadata.total : listing.items.length;
			}
			listing.pages += 1;
			delete listing.error;
		} catch (error) {
			listing.error = error;
		}
	}
}
