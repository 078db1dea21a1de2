/**
 * Tool pinning in the editor: Review Changed Tools (a diff editor of a drifted tool's pinned and
 * current definition, with its hidden-instruction flags) and Approve Changed Tools, offered when
 * the daemon announces that a workload's tools drifted from their pins.
 */
import * as vscode from 'vscode';
import { ApproveWorkloadTools, GetWorkloadTools, ListWorkloads, type PinnedDefinition } from '../../../protocol/protocol.workloads.js';
import type { Hangar } from '../hangar.js';
import { showFailure } from '../ui/errors.js';
import type { WorkloadItem } from '../views/workloads.js';

type Drifted = PinnedDefinition & { kind: 'tool' | 'prompt' };

async function driftedOf(hangar: Hangar, name: string): Promise<Drifted[]> {
	const result = await hangar.daemon.request(GetWorkloadTools, { name });
	return [...result.tools.map((item) => ({ ...item, kind: 'tool' as const })), ...result.prompts.map((item) => ({ ...item, kind: 'prompt' as const }))].filter((item) => item.state !== 'pinned');
}

/** From the command palette: one of the workloads whose tools drifted. */
async function pickDrifted(hangar: Hangar, title: string): Promise<string | undefined> {
	const { workloads } = await hangar.daemon.request(ListWorkloads, { all: true });
	const drifted = workloads.filter((workload) => workload.tools_drifted?.length);
	if (!drifted.length) return void vscode.window.showInformationMessage('The tools of every workload are as approved.');
	const picked = await vscode.window.showQuickPick(drifted.map((workload) => ({ label: workload.name, description: workload.tools_drifted!.join(', ') })), { title, placeHolder: 'Workload' });
	return picked?.label;
}

function flagsText(item: PinnedDefinition): string {
	return item.flags.map((flag) => `${flag.rule}${flag.severity === 'review' ? ' (for review)' : ''}: ${flag.detail}`).join('; ');
}

/**
 * Announces each workload's drift once: when the daemon says it began or changed, and, when the
 * daemon starts, drift that happened while the editor was not listening.
 */
export class DriftAnnouncer {
	/** The drifted names last announced, per workload. */
	private readonly announced = new Map<string, string>();

	constructor(private readonly hangar: Hangar) {}

	/** `drifted` as the daemon sends it: undefined says nothing of drift, empty that it was approved. */
	consider(name: string, drifted: readonly string[] | undefined): void {
		if (drifted === undefined) return;
		if (!drifted.length) return void this.announced.delete(name);
		const key = [...drifted].sort().join('\n');
		if (this.announced.get(name) === key) return;
		this.announced.set(name, key);
		void announceToolDrift(this.hangar, name, drifted);
	}

	async considerAll(): Promise<void> {
		const { workloads } = await this.hangar.daemon.request(ListWorkloads, { all: true });
		for (const workload of workloads) this.consider(workload.name, workload.tools_drifted ?? []);
	}
}

/** Offers the review and approval of a workload whose tools drifted (the daemon's `tools_drifted`). */
async function announceToolDrift(hangar: Hangar, name: string, names: readonly string[]): Promise<void> {
	const chosen = await vscode.window.showWarningMessage(
		`The tools of workload ${name} changed since you approved them: ${names.join(', ')}. Clients cannot use them until you approve.`,
		'Review Changes',
		'Approve',
	);
	if (chosen === 'Review Changes') await reviewToolDrift(hangar, undefined, name);
	else if (chosen === 'Approve') await approveTools(hangar, undefined, name);
}

/** Review Changed Tools: a diff editor of each drifted tool the user picks, pinned on the left. */
export async function reviewToolDrift(hangar: Hangar, item?: WorkloadItem, named?: string): Promise<void> {
	let name = item?.name ?? named;
	try {
		name ??= await pickDrifted(hangar, 'Review Changed Tools');
		if (!name) return;
		const drifted = await driftedOf(hangar, name);
		if (!drifted.length) return void vscode.window.showInformationMessage(`Every tool of ${name} is as approved.`);
		const picked =
			drifted.length === 1
				? drifted[0]
				: (
						await vscode.window.showQuickPick(
							drifted.map((entry) => ({ label: entry.name, description: `${entry.kind}, ${entry.state}${entry.duplicate ? ', listed twice' : ''}`, detail: flagsText(entry) || undefined, entry })),
							{ title: `Changed tools of ${name}`, placeHolder: 'Tool or prompt to review' },
						)
					)?.entry;
		if (!picked) return;
		const text = (definition: Record<string, unknown> | undefined) => `${JSON.stringify(definition ?? {}, null, 2)}\n`;
		const base = `/workloads/${name}/${picked.kind}s/${picked.name}`;
		await hangar.documents.diff({ path: `${base}.pinned.json`, text: text(picked.pinned) }, { path: `${base}.current.json`, text: text(picked.current) }, `${name}: ${picked.kind} ${picked.name} (${picked.state}) pinned ↔ current`);
		const flags = flagsText(picked);
		const approve = await vscode.window.showInformationMessage(`${picked.kind} ${picked.name} of ${name}: ${picked.state}${flags ? `. Flagged: ${flags}` : ''}`, `Approve ${picked.name}`);
		if (approve) await approveTools(hangar, undefined, name, [picked]);
	} catch (error) {
		await showFailure(error, `review the tools of ${name}`);
	}
}

/** Approve Changed Tools: re-pins what drifted (or `only` those), after the user confirms. */
export async function approveTools(hangar: Hangar, item?: WorkloadItem, named?: string, only?: readonly Drifted[]): Promise<void> {
	let name = item?.name ?? named;
	try {
		name ??= await pickDrifted(hangar, 'Approve Changed Tools');
		if (!name) return;
		const drifted = only ?? (await driftedOf(hangar, name)).filter((entry) => !entry.duplicate);
		if (!drifted.length) return void vscode.window.showInformationMessage(`Nothing of ${name} to approve.`);
		const flagged = drifted.filter((entry) => entry.flags.length);
		const confirmed = await vscode.window.showWarningMessage(
			`Approve ${drifted.map((entry) => entry.name).join(', ')} of ${name}?`,
			{ modal: true, detail: `Clients of ${name} will see their new definitions.${flagged.length ? ` Flagged: ${flagged.map((entry) => `${entry.name} (${flagsText(entry)})`).join('; ')}` : ''}` },
			'Approve',
		);
		if (confirmed !== 'Approve') return;
		const pick = (kind: 'tool' | 'prompt') => drifted.filter((entry) => entry.kind === kind).map((entry) => entry.name);
		const approved = await hangar.daemon.request(ApproveWorkloadTools, { name, tools: pick('tool'), prompts: pick('prompt') });
		vscode.window.setStatusBarMessage(`Approved for ${name}: ${[...approved.tools, ...approved.prompts].join(', ')}`, 5_000);
	} catch (error) {
		await showFailure(error, `approve the tools of ${name}`);
	} finally {
		hangar.workloads.refresh();
	}
}
