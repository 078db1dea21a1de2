/**
 * Tasks across eras: a 2025-11-25 client's tasks on a server that offers the 2026-07-28 Tasks
 * extension. The client asks for a task (`params.task` on `tools/call`) and follows it with
 * `tasks/get`, `tasks/result` (blocking, with the server's questions asked on its stream),
 * `tasks/list` and `tasks/cancel`. The extension is server-directed instead: a task only when
 * the request declared the extension, the result inline in `tasks/get`, input requests
 * answered with `tasks/update`, and no `tasks/list`, so the list is the session's own record.
 * A call that declares the extension in its own `_meta` (the extension's per-request opt-in)
 * asked in the extension's terms: it gets the server's answer as the server gave it, a task
 * included.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, errorResponse, META_2026, RELATED_TASK, TASKS_EXTENSION, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../core/jsonrpc.js';

const CLIENT_CAPABILITIES = META_2026.clientCapabilities;
/** Tasks one session keeps track of; the oldest is forgotten past this. */
const MAX_TASKS = 256;
/** How long a task the proxy holds itself (see `held`) is kept when the client named no TTL. */
const HELD_TTL_MS = 10 * 60_000;
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5_000;

/** An input request of a 2026-07-28 result: what the server would have asked the client itself. */
export interface InputRequest {
	method: string;
	params?: Record<string, unknown>;
}

/** A task as the extension describes it (`tasks/get`, or the `resultType: "task"` of the call that made it). */
interface Task2026 {
	taskId: string;
	status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
	statusMessage?: string;
	createdAt: string;
	lastUpdatedAt: string;
	ttlMs: number | null;
	pollIntervalMs?: number;
	result?: Record<string, unknown>;
	error?: { code: number; message: string; data?: unknown };
	inputRequests?: Record<string, InputRequest>;
}

/** What the bridge needs of the session it works for. */
export interface TaskPort {
	/** A request to the server with the Tasks extension declared; its answer as the server gave it (input rounds done). */
	call(method: string, params: Record<string, unknown>, signal: AbortSignal, options: { id?: RequestId; withTasks: true }): Promise<JsonRpcResponse>;
	/** Asks the client what the server asked, as a server request related to the client's request `call`. */
	ask(call: RequestId, input: InputRequest, signal: AbortSignal): Promise<JsonRpcResponse>;
}

export class Server2026Tasks {
	/**
	 * The session's tasks, oldest first. A task the server made is `undefined` here (the server
	 * holds it); one the proxy holds is the completed task itself: the client asked for a task
	 * and the server chose to answer at once.
	 */
	private readonly tasks = new Map<string, Task2026 | undefined>();
	/** Per task, the input requests the client has answered already. */
	private readonly answered = new Map<string, Set<string>>();

	constructor(private readonly port: TaskPort) {}

	/** The server's capabilities as a 2025-11-25 client reads them: the extension becomes core `tasks`. */
	static capabilities2025(capabilities: Record<string, unknown>): Record<string, unknown> {
		const extensions = capabilities.extensions as Record<string, unknown> | undefined;
		if (!extensions || !(TASKS_EXTENSION in extensions)) return capabilities;
		return { ...capabilities, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };
	}

	/** `claims` with the Tasks extension declared among the client's capabilities. */
	static withTasksExtension(claims: Record<string, unknown>): Record<string, unknown> {
		const capabilities = (claims[CLIENT_CAPABILITIES] ?? {}) as Record<string, unknown>;
		const extensions = (capabilities.extensions ?? {}) as Record<string, unknown>;
		return { ...claims, [CLIENT_CAPABILITIES]: { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } } };
	}

	/** Answers a task matter of the client; undefined for any other request. */
	async request(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse | undefined> {
		const params = message.params ?? {};
		if (message.method === 'tools/call') {
			if (params.task !== undefined) return this.create(message, signal);
			return declaresTasks(params._meta) ? this.optedIn(message, signal) : undefined;
		}
		if (message.method === 'tasks/list') return this.list(message.id, signal);
		if (!['tasks/get', 'tasks/result', 'tasks/cancel'].includes(message.method)) return undefined;
		const taskId = params.taskId;
		if (typeof taskId !== 'string' || !this.tasks.has(taskId)) return errorResponse(message.id, ErrorCode.InvalidParams, `Invalid params: no task ${JSON.stringify(taskId)} in this session`);
		if (message.method === 'tasks/result') return this.result(message.id, taskId, signal);
		if (message.method === 'tasks/cancel') {
			if (this.tasks.get(taskId) === undefined) {
				const cancelled = await this.port.call('tasks/cancel', { taskId }, signal, { withTasks: true });
				if (cancelled.error) return { ...cancelled, id: message.id };
			}
		}
		const task = await this.get(taskId, signal);
		return 'taskId' in task ? { jsonrpc: '2.0', id: message.id, result: task2025Of(task) } : { ...task, id: message.id };
	}

	private async create(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		const { task: requested, ...params } = message.params!;
		const answer = await this.port.call('tools/call', params, signal, { id: message.id, withTasks: true });
		if (!answer.result) return answer;
		const { resultType, ...result } = answer.result;
		let task: Task2026;
		if (resultType === 'task') {
			task = result as unknown as Task2026;
			this.remember(task.taskId, undefined);
		} else {
			const ttl = (requested as { ttl?: unknown } | undefined)?.ttl;
			const now = new Date().toISOString();
			task = { taskId: `hangar-task-${randomUUID()}`, status: 'completed', createdAt: now, lastUpdatedAt: now, ttlMs: typeof ttl === 'number' ? ttl : HELD_TTL_MS, result: result2025Of(result) };
			this.remember(task.taskId, task);
			setTimeout(() => this.tasks.delete(task.taskId), Math.min(task.ttlMs ?? HELD_TTL_MS, HELD_TTL_MS)).unref();
		}
		return { jsonrpc: '2.0', id: message.id, result: { task: task2025Of(task) } };
	}

	/** A call opted into a task by its own `_meta`: the server's answer as it gave it, a task kept as the session's. */
	private async optedIn(message: JsonRpcRequest, signal: AbortSignal): Promise<JsonRpcResponse> {
		const answer = await this.port.call('tools/call', message.params!, signal, { id: message.id, withTasks: true });
		if (!answer.result) return answer;
		if (answer.result.resultType !== 'task') return { ...answer, result: result2025Of(answer.result) };
		this.remember(String(answer.result.taskId), undefined);
		return answer;
	}

	private remember(taskId: string, held: Task2026 | undefined): void {
		this.tasks.set(taskId, held);
		for (const oldest of this.tasks.keys()) {
			if (this.tasks.size <= MAX_TASKS) break;
			this.tasks.delete(oldest);
			this.answered.delete(oldest);
		}
	}

	/** The task now: the one the proxy holds, or the server's answer to `tasks/get` (an error response when it has none). */
	private async get(taskId: string, signal: AbortSignal): Promise<Task2026 | JsonRpcResponse> {
		const held = this.tasks.get(taskId);
		if (held) return held;
		const answer = await this.port.call('tasks/get', { taskId }, signal, { withTasks: true });
		if (!answer.result) return answer;
		return answer.result as unknown as Task2026;
	}

	/**
	 * `tasks/result`: waits for the task to end, asking the client what the server asks on the
	 * way (each question once), and answers with the task's result or its error.
	 */
	private async result(id: RequestId, taskId: string, signal: AbortSignal): Promise<JsonRpcResponse> {
		for (;;) {
			const task = await this.get(taskId, signal);
			if (!('taskId' in task)) return { ...task, id };
			switch (task.status) {
				case 'completed': {
					const result = result2025Of(task.result ?? {});
					return { jsonrpc: '2.0', id, result: { ...result, _meta: { ...(result._meta as object | undefined), [RELATED_TASK]: { taskId } } } };
				}
				case 'failed':
					return errorResponse(id, task.error?.code ?? ErrorCode.InternalError, task.error?.message ?? 'the task failed', task.error?.data);
				case 'cancelled':
					return errorResponse(id, ErrorCode.InvalidRequest, `task ${taskId} was cancelled`);
				case 'input_required': {
					const refused = await this.answerInputs(id, task, signal);
					if (refused) return refused;
					break;
				}
				default:
					await pause(Math.min(Math.max(task.pollIntervalMs ?? 1_000, MIN_POLL_MS), MAX_POLL_MS), signal);
			}
			if (signal.aborted) return errorResponse(id, ErrorCode.RequestTimeout, 'request cancelled');
		}
	}

	/** Asks the client the task's new questions and gives the server the answers (`tasks/update`); an error response when that fails. */
	private async answerInputs(id: RequestId, task: Task2026, signal: AbortSignal): Promise<JsonRpcResponse | undefined> {
		const answered = this.answered.get(task.taskId) ?? new Set<string>();
		this.answered.set(task.taskId, answered);
		const responses: Record<string, unknown> = {};
		for (const [key, input] of Object.entries(task.inputRequests ?? {})) {
			if (answered.has(key)) continue;
			const related = { ...input, params: { ...input.params, _meta: { ...(input.params?._meta as object | undefined), [RELATED_TASK]: { taskId: task.taskId } } } };
			const response = await this.port.ask(id, related, signal);
			if (response.error) return errorResponse(id, response.error.code, response.error.message, response.error.data);
			responses[key] = response.result;
		}
		if (Object.keys(responses).length === 0) {
			// Answered already: the server has not moved on yet.
			await pause(MIN_POLL_MS * 4, signal);
			return undefined;
		}
		const updated = await this.port.call('tasks/update', { taskId: task.taskId, inputResponses: responses }, signal, { withTasks: true });
		if (updated.error) return { ...updated, id };
		for (const key of Object.keys(responses)) answered.add(key);
		return undefined;
	}

	/** `tasks/list`: the session's tasks that still exist, as the server describes them now. */
	private async list(id: RequestId, signal: AbortSignal): Promise<JsonRpcResponse> {
		const tasks: Array<Record<string, unknown>> = [];
		for (const taskId of [...this.tasks.keys()]) {
			const task = await this.get(taskId, signal);
			if ('taskId' in task) tasks.push(task2025Of(task));
			else this.tasks.delete(taskId); // expired upstream
		}
		return { jsonrpc: '2.0', id, result: { tasks } };
	}
}

/** Whether a request's own `_meta` declares the Tasks extension among the client's capabilities. */
function declaresTasks(meta: unknown): boolean {
	const capabilities = (meta as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES] as { extensions?: Record<string, unknown> } | undefined;
	return typeof capabilities?.extensions?.[TASKS_EXTENSION] === 'object';
}

/** A task as a 2025-11-25 client knows it. */
function task2025Of(task: Task2026): Record<string, unknown> {
	const converted: Record<string, unknown> = { taskId: task.taskId, status: task.status, createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt, ttl: task.ttlMs ?? null };
	if (task.statusMessage !== undefined) converted.statusMessage = task.statusMessage;
	if (task.pollIntervalMs !== undefined) converted.pollInterval = task.pollIntervalMs;
	return converted;
}

/** A 2026-07-28 result without the fields of its revision. */
function result2025Of(result: Record<string, unknown>): Record<string, unknown> {
	const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...result2025 } = result;
	return result2025;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
	return new Promise((resolve) => {
		const timer = setTimeout(done, ms);
		signal.addEventListener('abort', done, { once: true });
		function done() {
			clearTimeout(timer);
			signal.removeEventListener('abort', done);
			resolve();
		}
	});
}
