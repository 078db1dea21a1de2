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
import { argumentAttributes } from './cedarEntities.js';
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
];
/** The built-in policy behind the session actions. */
export const SESSION_POLICY = `permit(principal, action in [${SESSION_ACTIONS.map((action) => `Action::"${action}"`).join(', ')}], resource);`;
const session = (action) => ({ kind: 'check', action, type: 'MCP', id: '', attributes: {} });
const SESSION_METHODS = {
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
export const toolCheck = (name, hints, args) => ({
    kind: 'check',
    action: 'call_tool',
    type: 'Tool',
    id: name,
    attributes: { name, operation: 'call', feature: 'tool', ...hints, ...args },
    args,
});
const promptCheck = (name, args) => ({ kind: 'check', action: 'get_prompt', type: 'Prompt', id: name, attributes: { name, operation: 'get', feature: 'prompt', ...args }, args });
const resourceCheck = (uri) => ({ kind: 'check', action: 'read_resource', type: 'Resource', id: uri, attributes: { name: uri, uri, operation: 'read', feature: 'resource' } });
const taskCheck = (action, taskId) => ({
    kind: 'check',
    action,
    type: 'Task',
    id: taskId,
    attributes: { taskId, operation: action.slice(0, action.indexOf('_')), feature: 'task' },
});
const methodCheck = (method) => ({ kind: 'check', action: 'call_method', type: 'Method', id: method, attributes: { name: method, operation: 'call', feature: 'method' } });
const text = (value) => (typeof value === 'string' ? value : String(value ?? ''));
/**
 * How a message with `method` is authorized. `hints` gives a tool's annotations (readOnlyHint…)
 * by name, for tool checks.
 */
export function authorizationOf(method, params, hints) {
    const sessionAction = SESSION_METHODS[method];
    if (sessionAction)
        return session(sessionAction);
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
            const ref = (params.ref ?? {});
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
export const RESPONSE_CHECK = session('respond');
//# sourceMappingURL=methodActions.js.map