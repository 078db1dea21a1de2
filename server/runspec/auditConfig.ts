/**
 * The audit configuration (`audit_config`): the event types ToolHive defines, and the checks
 * a configuration must pass, run when a workload is created and when its proxy starts.
 */
import { isAbsolute } from 'node:path';
import type { AuditConfig } from '../../protocol/runConfig.js';

/** Every event type ToolHive defines (the vMCP ones are accepted in filters, never written here). */
export const AUDIT_EVENT_TYPES = [
	'mcp_initialize',
	'sse_connection',
	'mcp_tool_call',
	'mcp_tools_list',
	'mcp_resource_read',
	'mcp_resources_list',
	'mcp_prompt_get',
	'mcp_prompts_list',
	'mcp_notification',
	'mcp_ping',
	'mcp_logging',
	'mcp_completion',
	'mcp_roots_list_changed',
	'mcp_request',
	'http_request',
	'vmcp_workflow_started',
	'vmcp_workflow_completed',
	'vmcp_workflow_failed',
	'vmcp_workflow_timed_out',
	'vmcp_workflow_step_started',
	'vmcp_workflow_step_completed',
	'vmcp_workflow_step_failed',
	'vmcp_workflow_step_skipped',
	// Hangar: a tool or prompt list differs from the pins (tool pinning).
	'mcp_tool_drift',
];

/** What is wrong with an audit configuration, and in which field; undefined when nothing is. */
export function auditConfigProblem(config: AuditConfig): { field: string; message: string } | undefined {
	for (const field of ['eventTypes', 'excludeEventTypes'] as const) {
		const unknown = (config[field] ?? []).find((type) => !AUDIT_EVENT_TYPES.includes(type));
		if (unknown !== undefined) return { field, message: `unknown event type ${JSON.stringify(unknown)} (known: ${AUDIT_EVENT_TYPES.slice(0, 15).join(', ')})` };
	}
	if (config.logFile && !isAbsolute(config.logFile)) return { field: 'logFile', message: 'must be an absolute path' };
	if (config.maxDataSize !== undefined && config.maxDataSize < 0) return { field: 'maxDataSize', message: 'must be 0 or more' };
	return undefined;
}
