/**
 * The Cedar action of every MCP method a client can send, for every revision from 2024-11-05
 * to 2026-07-28 (the table is in docs/security.md). Three kinds:
 *
 * - a **check**: one decision before the message goes on (`tools/call` → `call_tool` on
 *   `Tool::"<name>"`…);
 * - a **filter**: lists go on, and their answer keeps only the items the caller may use, each
 *   decided with the action that uses it (a list never shows what a call would deny);
 * - **session actions** (`initialize`, `ping`, `respond`…) on the server itself,
 *   `MCP::"<workload>"`: permitted by a built-in policy (no client could connect otherwise)
 *   that a `forbid` overrides.
 *
 * A method the proxy does not know is `call_method` on `Method::"<method>"`: permit-all lets it
 * through, a policy set that permits nothing for it denies it.
 */
import { argumentAttributes, type Attributes } from './cedarEntities.js';

export const SESSION_ACTIONS = [
	'initialize',
	'ping',
	'discover',
	'set_log_level',
	'listen',
	'cancel',
	'report_progress',
	'notify_roots_changed',
	'respond',
] as const;
export type SessionAction = (typeof SESSION_ACTIONS)[number];
export type PolicyAction = 'call_tool' | 'get_prompt' | 'read_resource' | 'get_task' | 'cancel_task' | 'update_task' | 'call_method';
export type CedarAction = SessionAction | PolicyAction;
export type CedarResourceType = 'Tool' | 'Prompt' | 'Resource' | 'Task' | 'Method' | 'MCP';

/** The built-in policy behind the session actions. */
export const SESSION_POLICY = `permit(principal, action in [${SESSION_ACTIONS.map((action) => `Action::"${action}"`).join(', ')}], resource);`;

export interface Check {
	readonly kind: 'check';
	readonly action: CedarAction;
	readonly type: CedarResourceType;
	/** The resource's id; empty for the server itself (`MCP::"<workload>"`). */
	readonly id: string;
	readonly attributes: Attributes;
	/** A call's arguments (`arg_*`), which the context carries too. */
	readonly args?: Attributes;
}

export interface Filter {
	readonly kind: 'filter';
	/** Where the list is in the result. */
	readonly key: 'tools' | 'prompts' | 'resources' | 'resourceTemplates' | 'tasks';
	/** The check of one item; undefined drops it. */
	item(value: Record<string, unknown>): Check | undefined;
}

export type Authorization = Check | Filter;

const session = (action: SessionAction): Check => ({ kind: 'check', action, type: 'MCP', id: '', attributes: {} });

const SESSION_METHODS: Readonly<Record<string, SessionAction>> = {
	initialize: 'initialize',
	'notifications/initialized': 'initialize',
	ping: 'ping',
	'server/discover': 'discover',
	'logging/setLevel': 'set_log_level',
	'subscriptions/listen': 'listen',
	'notifications/cancelled': 'cancel',
	'notifications/progress': 'report_progress',
	'notifications/roots/list_changed': 'notify_roots_changed',
	// The client's side of a task it runs for the server (task-augmented sampling, elicitation).
	'notifications/tasks/status': 'respond',
};

// A resource's attributes are built the same way for a call and for the list that shows it.
export const toolCheck = (name: string, hints: Attributes, args?: Attributes): Check => ({
	kind: 'check',
	action: 'call_tool',
	type: 'Tool',
	id: name,
	attributes: { name, operation: 'call', feature: 'tool', ...hints, ...args },
	args,
});
const promptCheck = (name: string, args?: Attributes): Check => ({ kind: 'check', action: 'get_prompt', type: 'Prompt', id: name, attributes: { name, operation: 'get', feature: 'prompt', ...args }, args });
const resourceCheck = (uri: string): Check => ({ kind: 'check', action: 'read_resource', type: 'Resource', id: uri, attributes: { name: uri, uri, operation: 'read', feature: 'resource' } });
const taskCheck = (action: 'get_task' | 'cancel_task' | 'update_task', taskId: string): Check => ({
	kind: 'check',
	action,
	type: 'Task',
	id: taskId,
	attributes: { taskId, operation: action.slice(0, action.indexOf('_')), feature: 'task' },
});
const methodCheck = (method: string): Check => ({ kind: 'check', action: 'call_method', type: 'Method', id: method, attributes: { name: method, operation: 'call', feature: 'method' } });

const text = (value: unknown): string => (typeof value === 'string' ? value : String(value ?? ''));

/**
 * How a message with `method` is authorized. `hints` gives a tool's annotations (readOnlyHint…)
 * by name, for tool checks.
 */
export function authorizationOf(method: string, params: Record<string, unknown>, hints: (tool: string) => Attributes): Authorization {
	const sessionAction = SESSION_METHODS[method];
	if (sessionAction) return session(sessionAction);
	switch (method) {
		case 'tools/call': {
			const name = text(params.name);
			return toolCheck(name, hints(name), argumentAttributes(params.arguments));
		}
		case 'prompts/get':
			return promptCheck(text(params.name), argumentAttributes(params.arguments));
		case 'resources/read':
		case 'resources/subscribe':
		case 'resources/unsubscribe':
			return resourceCheck(text(params.uri));
		case 'completion/complete': {
			// Completing an argument reveals what the prompt or resource holds: the same decision as using it.
			const ref = (params.ref ?? {}) as Record<string, unknown>;
			return ref.type === 'ref/prompt' ? promptCheck(text(ref.name)) : resourceCheck(text(ref.uri));
		}
		case 'tasks/get':
		case 'tasks/result':
			return taskCheck('get_task', text(params.taskId));
		case 'tasks/cancel':
			return taskCheck('cancel_task', text(params.taskId));
		case 'tasks/update':
			return taskCheck('update_task', text(params.taskId));
		case 'tools/list':
			return { kind: 'filter', key: 'tools', item: (tool) => toolCheck(text(tool.name), hints(text(tool.name))) };
		case 'prompts/list':
			return { kind: 'filter', key: 'prompts', item: (prompt) => promptCheck(text(prompt.name)) };
		case 'resources/list':
			return { kind: 'filter', key: 'resources', item: (resource) => resourceCheck(text(resource.uri)) };
		case 'resources/templates/list':
			return { kind: 'filter', key: 'resourceTemplates', item: (template) => resourceCheck(text(template.uriTemplate)) };
		case 'tasks/list':
			return { kind: 'filter', key: 'tasks', item: (task) => taskCheck('get_task', text(task.taskId)) };
		default:
			return methodCheck(method);
	}
}

/** A client's response to a server request (sampling, elicitation, roots). */
export const RESPONSE_CHECK: Check = session('respond');
