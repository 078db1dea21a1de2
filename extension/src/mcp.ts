/**
 * Offers Hangar's running workloads to VS Code's own MCP support (chat, agent mode) through
 * `vscode.lm.registerMcpServerDefinitionProvider`, so nobody edits mcp.json by hand. Editors
 * without that API (older VS Code, some forks) simply do not get the provider.
 */
import * as vscode from 'vscode';
import { ListWorkloads, type WorkloadSummary } from '../../protocol/protocol.workloads.js';
import { groupOfImage, throughAggregates } from '../../protocol/runConfig.js';
import type { DaemonSupervisor } from './daemon.js';

export const MCP_PROVIDER_ID = 'hangar.workloads';

/**
 * Running workloads with a URL, as HTTP server definitions (streamable HTTP, SSE fallback); a
 * group with a running aggregate is offered as that aggregate alone, as client files list it
 * (its members are reached through it).
 */
export function workloadDefinitions(workloads: readonly WorkloadSummary[]): vscode.McpHttpServerDefinition[] {
	const running = workloads.filter((workload) => workload.status === 'running' && workload.url);
	return throughAggregates(running, (workload) => workload.group ?? 'default', (workload) => groupOfImage(workload.package))
		.sort((a, b) => a.name.localeCompare(b.name))
		.map((workload) => new vscode.McpHttpServerDefinition(workload.name, vscode.Uri.parse(workload.url!)));
}

/** Registers the provider when the editor has the API; undefined when it does not. */
export function registerMcpProvider(
	daemon: DaemonSupervisor,
	onDidChange: vscode.Event<void>,
	log: (line: string) => void,
): vscode.Disposable | undefined {
	const lm = (vscode as { lm?: Partial<typeof vscode.lm> }).lm;
	if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof vscode.McpHttpServerDefinition !== 'function') {
		return undefined;
	}
	return lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
		onDidChangeMcpServerDefinitions: onDidChange,
		provideMcpServerDefinitions: async () => {
			try {
				return workloadDefinitions((await daemon.request(ListWorkloads, {})).workloads);
			} catch (error) {
				log(`could not list workloads for VS Code's MCP servers: ${(error as Error).message}`);
				return [];
			}
		},
	});
}
