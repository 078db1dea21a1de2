/**
 * Entry point: starts the daemon, and wires the commands, the views, the read-only documents
 * and the MCP server provider to it. `deactivate` shuts the daemon down.
 */
import * as vscode from 'vscode';
import { SkillsDidChange } from '../../protocol/protocol.skills.js';
import { WorkloadsDidChange } from '../../protocol/protocol.workloads.js';
import { registerClient } from './commands/clients.js';
import { changeDefaultRegistry } from './commands/registry.js';
import { setSecret, setupSecrets } from './commands/secrets.js';
import { approveTools, DriftAnnouncer, reviewToolDrift } from './commands/tools.js';
import { installSkill, registrySkillSource, showSkillContent, SkillValidator, syncSkills, uninstallSkill } from './commands/skills.js';
import { removeWorkload, restartWorkload, runServer, showWorkloadLogs, signInWorkload, stopWorkload } from './commands/workloads.js';
import { daemonCommand, DaemonSupervisor } from './daemon.js';
import { ReadOnlyDocuments, SCHEME } from './documents.js';
import type { Hangar } from './hangar.js';
import { registerMcpProvider } from './mcp.js';
import { readSettings } from './settings.js';
import { showFailure } from './ui/errors.js';
import { RegistryView, type LoadMoreItem, type RegistryNode } from './views/registry.js';
import { SkillsView, type SkillItem } from './views/skills.js';
import { WorkloadsView, type WorkloadItem } from './views/workloads.js';

let daemon: DaemonSupervisor | undefined;

export function activate(context: vscode.ExtensionContext): void {
	const output = vscode.window.createOutputChannel('Hangar');
	const bundled = vscode.Uri.joinPath(context.extensionUri, 'dist', 'hangar.mjs').fsPath;
	const supervisor = new DaemonSupervisor({
		command: () => daemonCommand(readSettings().daemonPath, bundled, process.execPath, process.env),
		clientName: `vscode-hangar ${context.extension.packageJSON.version as string}`,
		log: (line) => output.appendLine(line),
	});
	daemon = supervisor;
	const hangar: Hangar = {
		daemon: supervisor,
		documents: new ReadOnlyDocuments(),
		skills: new SkillsView(supervisor),
		workloads: new WorkloadsView(supervisor),
		registry: new RegistryView(supervisor),
	};
	const workloadsChanged = new vscode.EventEmitter<void>();
	const validator = new SkillValidator(hangar);
	const drift = new DriftAnnouncer(hangar);
	const registryTree = vscode.window.createTreeView('hangar.registry', { treeDataProvider: hangar.registry });

	const command = <A extends unknown[]>(id: string, run: (...args: A) => unknown) =>
		vscode.commands.registerCommand(id, async (...args: A) => {
			try {
				await run(...args);
			} catch (error) {
				await showFailure(error, `run ${id}`);
			}
		});
	const searchRegistry = (query: string) => {
		hangar.registry.search(query);
		registryTree.description = query ? `"${query}"` : undefined;
		void vscode.commands.executeCommand('setContext', 'hangar.registrySearch', Boolean(query));
	};

	context.subscriptions.push(
		output,
		hangar.documents,
		workloadsChanged,
		validator,
		registryTree,
		vscode.workspace.registerTextDocumentContentProvider(SCHEME, hangar.documents),
		vscode.window.registerTreeDataProvider('hangar.skills', hangar.skills),
		vscode.window.registerTreeDataProvider('hangar.workloads', hangar.workloads),
		hangar.workloads,

		command('hangar.installSkill', (node?: RegistryNode) =>
			installSkill(hangar, node?.kind === 'registrySkill' ? registrySkillSource(node.skill) : undefined),
		),
		command('hangar.uninstallSkill', (item?: SkillItem) => uninstallSkill(hangar, item?.kind === 'skill' ? item : undefined)),
		command('hangar.showSkillContent', (node?: RegistryNode) =>
			showSkillContent(hangar, node?.kind === 'registrySkill' ? registrySkillSource(node.skill) : undefined),
		),
		command('hangar.validateSkill', (uri?: vscode.Uri) => validator.command(uri instanceof vscode.Uri ? uri : undefined)),
		command('hangar.syncSkills', () => syncSkills(hangar)),
		command('hangar.runServer', (node?: RegistryNode) => runServer(hangar, node?.kind === 'registryServer' ? node.server : undefined)),
		command('hangar.stopWorkload', (item?: WorkloadItem) => stopWorkload(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.restartWorkload', (item?: WorkloadItem) => restartWorkload(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.signInWorkload', (item?: WorkloadItem) => signInWorkload(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.removeWorkload', (item?: WorkloadItem) => removeWorkload(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.showWorkloadLogs', (item?: WorkloadItem) => showWorkloadLogs(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.reviewToolDrift', (item?: WorkloadItem) => reviewToolDrift(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.approveTools', (item?: WorkloadItem) => approveTools(hangar, item?.kind === 'workload' ? item : undefined)),
		command('hangar.registerClient', () => registerClient(hangar)),
		command('hangar.setupSecrets', () => setupSecrets(hangar)),
		command('hangar.setSecret', () => setSecret(hangar)),
		command('hangar.changeDefaultRegistry', () => changeDefaultRegistry(hangar)),
		command('hangar.searchRegistry', async () => {
			const query = await vscode.window.showInputBox({ title: 'Search Registry', prompt: 'Matches names and descriptions', value: hangar.registry.query });
			if (query !== undefined) searchRegistry(query);
		}),
		command('hangar.clearRegistrySearch', () => searchRegistry('')),
		command('hangar.loadMore', (item: LoadMoreItem) => hangar.registry.loadMore(item)),
		command('hangar.refresh', () => {
			hangar.skills.refresh();
			hangar.workloads.refresh();
			hangar.registry.refresh();
		}),
		command('hangar.showLog', () => output.show()),
		command('hangar.restartDaemon', async () => {
			await supervisor.restart();
			void vscode.window.showInformationMessage('The Hangar daemon was restarted.');
		}),

		supervisor.onNotification(SkillsDidChange, () => hangar.skills.refresh()),
		supervisor.onNotification(WorkloadsDidChange, (change) => {
			hangar.workloads.refresh();
			workloadsChanged.fire();
			drift.consider(change.name, change.tools_drifted);
			// A remote server behind OAuth needs the user: offer the sign-in.
			if (change.status === 'unauthenticated') {
				void vscode.window.showWarningMessage(`Workload ${change.name} needs a sign-in to its server.`, `Sign in to ${change.name}`).then((chosen) => {
					if (chosen) void signInWorkload(hangar, undefined, change.name);
				});
			}
		}),
		// A fresh daemon, at start or after a crash: whatever the views show may be stale, and
		// tools may have drifted while nothing listened.
		supervisor.onDidChangeState((state) => {
			if (state !== 'running') return;
			hangar.skills.refresh();
			hangar.workloads.refresh();
			drift.considerAll().catch((error: unknown) => output.appendLine(`cannot look for drifted tools: ${(error as Error).message}`));
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => hangar.skills.refreshScopes()),
		vscode.workspace.onDidChangeConfiguration((event) => {
			if (event.affectsConfiguration('hangar.daemonPath')) {
				void supervisor.restart().catch((error: unknown) => showFailure(error, 'restart the daemon with the new hangar.daemonPath'));
			}
		}),
	);
	const mcp = registerMcpProvider(supervisor, workloadsChanged.event, (line) => output.appendLine(line));
	if (mcp) context.subscriptions.push(mcp);
}

export async function deactivate(): Promise<void> {
	await daemon?.dispose();
	daemon = undefined;
}
