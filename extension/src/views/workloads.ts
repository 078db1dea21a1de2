/**
 * The Workloads view: every workload (running or not) with its status and URL, kept live by
 * the daemon's `workloads/didChange` notifications; a running one also shows its call rate over
 * the last minute and its last error (`workloads/stats`), refreshed while any is running. An
 * aggregate (image `group://NAME`) opens onto its members, which are listed on their own too.
 */
import * as vscode from 'vscode';
import { GetWorkloadStats, ListWorkloads, type WorkloadStats, type WorkloadStatus, type WorkloadSummary } from '../../../protocol/protocol.workloads.js';
import { groupOfImage } from '../../../protocol/runConfig.js';
import { visibleText } from '../../../protocol/visibleText.js';
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
	/** An aggregate's members, its children in the view. */
	readonly members: WorkloadItem[] = [];

	constructor(
		readonly workload: WorkloadSummary,
		readonly stats?: WorkloadStats,
		/** The aggregate this item is shown under, if it is one's member. */
		aggregate?: string,
	) {
		const group = groupOfImage(workload.package);
		super(workload.name, group === undefined ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed);
		const status = workload.status ?? 'unknown';
		const lastError = stats?.last_error;
		const drifted = workload.tools_drifted ?? [];
		this.description = [
			group !== undefined && `aggregate of group ${group}`,
			status,
			drifted.length && `tools changed: ${drifted.join(', ')}`,
			stats && `${rate(stats.calls_per_second)} requests/s`,
			lastError && `last error ${new Date(lastError.at).toLocaleTimeString()}: ${visibleText(lastError.message, true)}`,
			workload.url,
		]
			.filter(Boolean)
			.join(' · ');
		// A server's text (the status reason, its last error) is added as text, never rendered as
		// Markdown, with its control characters visible.
		const tooltip = new vscode.MarkdownString(`**${workload.name}** — ${status}`);
		if (workload.status_context) tooltip.appendText(` (${visibleText(workload.status_context, true)})`);
		tooltip.appendMarkdown(
			[
				'',
				workload.package ? `Package: \`${workload.package}\`` : undefined,
				workload.url ? `URL: ${workload.url}` : undefined,
				workload.group ? `Group: ${workload.group}` : undefined,
				workload.transport_type ? `Transport: ${workload.transport_type}` : undefined,
				stats &&
					`Last ${stats.window_seconds} s: ${stats.calls} requests, ${stats.errors} failed` +
						(stats.p50_ms === undefined ? '' : `, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms`) +
						` (since ${stats.since}: ${stats.total_calls} requests, ${stats.total_tool_calls} tool calls, ${stats.total_tool_errors} of them failed)`,
				lastError && `Last error (${lastError.at}, ${lastError.tool ? `tool ${lastError.tool}` : `${lastError.method}, code ${lastError.code}`}): `,
			]
				.filter((part) => part !== undefined)
				.join('\n\n'),
		);
		if (lastError) tooltip.appendText(visibleText(lastError.message));
		this.tooltip = tooltip;
		// A workload whose tools drifted from their pins needs the user as a sign-in does.
		const [icon, color] = drifted.length ? ['shield', 'problemsWarningIcon.foreground'] : STATUS_ICONS[status];
		this.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
		this.contextValue =
			status === 'running' ? (drifted.length ? 'workload.drifted' : 'workload.running') : status === 'unauthenticated' || status === 'auth_retrying' ? 'workload.unauthenticated' : 'workload.other';
		this.id = aggregate ? `workload:${aggregate}/${workload.name}` : `workload:${workload.name}`;
	}

	get name(): string {
		return this.workload.name;
	}
}

const rate = (perSecond: number) => perSecond.toFixed(perSecond >= 10 ? 0 : 2);

/** Seconds of calls the rate is counted over, and how often a view with running workloads refreshes. */
const STATS_WINDOW_SECONDS = 60;
const STATS_REFRESH_MS = 5_000;

export type WorkloadsNode = WorkloadItem | MessageItem;

/** The view's top level: every workload by name, each aggregate with its members (its group's other workloads) under it. */
export function workloadTree(workloads: readonly WorkloadSummary[], stats: readonly (WorkloadStats | undefined)[] = []): WorkloadItem[] {
	const items = workloads.map((workload, index) => new WorkloadItem(workload, stats[index])).sort((a, b) => a.name.localeCompare(b.name));
	for (const aggregate of items) {
		const group = groupOfImage(aggregate.workload.package);
		if (group === undefined) continue;
		const members = items.filter((item) => (item.workload.group ?? 'default') === group && groupOfImage(item.workload.package) === undefined);
		aggregate.members.push(...members.map((member) => new WorkloadItem(member.workload, member.stats, aggregate.name)));
	}
	return items;
}

export class WorkloadsView implements vscode.TreeDataProvider<WorkloadsNode>, vscode.Disposable {
	private readonly changed = new vscode.EventEmitter<WorkloadsNode | undefined>();
	readonly onDidChangeTreeData = this.changed.event;
	private statsTimer: NodeJS.Timeout | undefined;

	constructor(private readonly daemon: DaemonSupervisor) {}

	refresh(): void {
		this.changed.fire(undefined);
	}

	dispose(): void {
		clearTimeout(this.statsTimer);
		this.changed.dispose();
	}

	/** The statistics of a running workload; none when its proxy cannot tell (stopping meanwhile). */
	private async statsOf(workload: WorkloadSummary): Promise<WorkloadStats | undefined> {
		if (workload.status !== 'running') return undefined;
		return this.daemon.request(GetWorkloadStats, { name: workload.name, window: STATS_WINDOW_SECONDS }).catch(() => undefined);
	}

	getTreeItem(node: WorkloadsNode): vscode.TreeItem {
		return node;
	}

	async getChildren(node?: WorkloadsNode): Promise<WorkloadsNode[]> {
		if (node) return node instanceof WorkloadItem ? node.members : [];
		try {
			const { workloads } = await this.daemon.request(ListWorkloads, { all: true });
			const stats = await Promise.all(workloads.map((workload) => this.statsOf(workload)));
			// The call rates move while something runs: look again in a while.
			clearTimeout(this.statsTimer);
			if (stats.some(Boolean)) this.statsTimer = setTimeout(() => this.refresh(), STATS_REFRESH_MS);
			// No items lets the view's welcome content (Run MCP Server…) show.
			return workloadTree(workloads, stats);
		} catch (error) {
			return [MessageItem.failure(error, 'list workloads')];
		}
	}
}
