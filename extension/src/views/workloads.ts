/**
 * The Workloads view: every workload (running or not) with its status and URL, kept live by
 * the daemon's `workloads/didChange` notifications.
 */
import * as vscode from 'vscode';
import { ListWorkloads, type WorkloadStatus, type WorkloadSummary } from '../../../protocol/protocol.workloads.js';
import type { DaemonSupervisor } from '../daemon.js';
import { MessageItem } from './messages.js';

const STATUS_ICONS: Record<WorkloadStatus, [icon: string, color?: string]> = {
	running: ['pass-filled', 'testing.iconPassed'],
	starting: ['loading~spin'],
	stopping: ['loading~spin'],
	removing: ['loading~spin'],
	auth_retrying: ['loading~spin'],
	stopped: ['circle-large-outline'],
	error: ['error', 'errorForeground'],
	unhealthy: ['warning', 'problemsWarningIcon.foreground'],
	unauthenticated: ['lock', 'problemsWarningIcon.foreground'],
	policy_stopped: ['shield', 'problemsWarningIcon.foreground'],
	unknown: ['question'],
};

export class WorkloadItem extends vscode.TreeItem {
	readonly kind = 'workload';

	constructor(readonly workload: WorkloadSummary) {
		super(workload.name, vscode.TreeItemCollapsibleState.None);
		const status = workload.status ?? 'unknown';
		this.description = [status, workload.url].filter(Boolean).join(' · ');
		this.tooltip = new vscode.MarkdownString(
			[
				`**${workload.name}** — ${status}${workload.status_context ? ` (${workload.status_context})` : ''}`,
				workload.package ? `Package: \`${workload.package}\`` : undefined,
				workload.url ? `URL: ${workload.url}` : undefined,
				workload.group ? `Group: ${workload.group}` : undefined,
				workload.transport_type ? `Transport: ${workload.transport_type}` : undefined,
			]
				.filter(Boolean)
				.join('\n\n'),
		);
		const [icon, color] = STATUS_ICONS[status];
		this.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
		this.contextValue = status === 'running' ? 'workload.running' : 'workload.other';
		this.id = `workload:${workload.name}`;
	}

	get name(): string {
		return this.workload.name;
	}
}

export type WorkloadsNode = WorkloadItem | MessageItem;

export class WorkloadsView implements vscode.TreeDataProvider<WorkloadsNode> {
	private readonly changed = new vscode.EventEmitter<WorkloadsNode | undefined>();
	readonly onDidChangeTreeData = this.changed.event;

	constructor(private readonly daemon: DaemonSupervisor) {}

	refresh(): void {
		this.changed.fire(undefined);
	}

	getTreeItem(node: WorkloadsNode): vscode.TreeItem {
		return node;
	}

	async getChildren(node?: WorkloadsNode): Promise<WorkloadsNode[]> {
		if (node) return [];
		try {
			const { workloads } = await this.daemon.request(ListWorkloads, { all: true });
			// No items lets the view's welcome content (Run MCP Server…) show.
			return workloads.map((workload) => new WorkloadItem(workload)).sort((a, b) => a.name.localeCompare(b.name));
		} catch (error) {
			return [MessageItem.failure(error, 'list workloads')];
		}
	}
}
