/**
 * Tasks for MCP 2026-07-28 clients of 2025-11-25 servers. A server whose handshake offers core
 * tasks for `tools/call` is described to 2026-07-28 clients with the Tasks extension
 * (`io.modelcontextprotocol/tasks`); a client that declares the extension on a call of a tool
 * that supports tasks gets the call sent task-augmented, and the server's `{task}` back as a
 * `resultType: "task"` result.
 *
 * The two eras follow a task differently. The extension polls `tasks/get`, whose answer
 * carries the outcome inline and the server's questions as `inputRequests`, answered with
 * `tasks/update`. A 2025-11-25 server hands both out on a blocking `tasks/result` instead, its
 * questions as requests related to the task. So the proxy keeps one `tasks/result` open per
 * task from its creation: the requests it brings wait for the client's next `tasks/get`, and
 * its answer is the task's outcome.
 */
import type { HttpExchange, McpHandler, NoticeHandler } from '../chain/chain.js';
import { ErrorCode, errorResponse, isRequest, RELATED_TASK, TASKS_EXTENSION, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../core/jsonrpc.js';
import type { ClientSession } from '../sessions/clientSession.js';

/** The 2026-07-28 error for a request that needs a capability the client did not declare. */
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
/** Tasks followed at once; past this, the oldest is forgotten. */
const MAX_TASKS = 1_024;
/** How long a task that reached its end stays known, for a client that polls again. */
const ENDED_TASK_TTL_MS = 10 * 60_000;
/** Pages of `tools/list` read to learn which tools take tasks. */
const MAX_TOOL_PAGES = 20;
/** A tool missing from the list read this recently is not looked for again. */
const TOOLS_REREAD_MS = 5_000;

/** A task as 2025-11-25 describes it. */
interface Task2025 {
	taskId: string;
	status: string;
	statusMessage?: string;
	createdAt: string;
	lastUpdatedAt: string;
	ttl?: number | null;
	pollInterval?: number;
}

/** A task the proxy follows for its client. */
interface BridgedTask {
	readonly taskId: string;
	readonly owner: string;
	readonly session: ClientSession;
	readonly exchange: HttpExchange;
	/** Input key → the server's request waiting for the client's answer. */
	readonly asked: Map<string, JsonRpcRequest>;
	/** The open `tasks/result`: the task's outcome, once it has one. */
	readonly outcome: Promise<JsonRpcResponse>;
	readonly stop: AbortController;
}

/** One 2026-07-28 request on a 2025 session, as the 2026 client bridge (client2026.ts) hands it over. */
export interface TaskMatter {
	readonly exchange: HttpExchange;
	readonly request: JsonRpcRequest;
	/** Its params without the revision's claims. */
	readonly params: Record<string, unknown>;
	readonly session: ClientSession;
	readonly handshake: Record<string, unknown>;
	readonly owner: string;
	readonly declared: Record<string, unknown>;
}

export class Client2026Tasks {
	private readonly tasks = new Map<string, BridgedTask>();
	/** Per 2025 session, each tool's `execution.taskSupport`, and when it was read. */
	private readonly support = new WeakMap<ClientSession, { readonly tools: Map<string, string>; readonly at: number }>();
	private nextId = 1;

	constructor(
		private readonly handle: McpHandler,
		private readonly notify: NoticeHandler,
	) {}

	/** A 2025 server's capabilities for a 2026-07-28 client: its core tasks become the extension. */
	static offered(capabilities: Record<string, unknown>): Record<string, unknown> {
		const { tasks, ...rest } = capabilities;
		if (!takesToolTasks(tasks)) return rest;
		return { ...rest, extensions: { ...(rest.extensions as Record<string, unknown> | undefined), [TASKS_EXTENSION]: {} } };
	}

	/** The answer to a task matter (a task call, `tasks/get`, `tasks/update`, `tasks/cancel`); undefined for anything else. */
	async answer(matter: TaskMatter): Promise<JsonRpcResponse | undefined> {
		const { request } = matter;
		if (request.method === 'tools/call') return this.call(matter);
		if (!['tasks/get', 'tasks/update', 'tasks/cancel'].includes(request.method)) return undefined;
		if (!declaresTasks(matter.declared)) return missingTasksCapability(request);
		const task = this.tasks.get(String(matter.params.taskId));
		if (!task || task.owner !== matter.owner || task.session.signal.aborted) {
			return errorResponse(request.id, ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
		}
		if (request.method === 'tasks/get') return this.get(request, task);
		if (request.method === 'tasks/update') return this.update(request, task, matter.params.inputResponses);
		const cancelled = await this.send(task.session, task.exchange, 'tasks/cancel', { taskId: task.taskId });
		return cancelled.error ? { ...cancelled, id: request.id } : { jsonrpc: '2.0', id: request.id, result: {} };
	}

	/** A `tools/call`: sent task-augmented when the client and the tool both take tasks; undefined when it is a plain call. */
	private async call(matter: TaskMatter): Promise<JsonRpcResponse | undefined> {
		const { request, params, session } = matter;
		if (!takesToolTasks((matter.handshake.capabilities as Record<string, unknown> | undefined)?.tasks)) return undefined;
		const support = await this.taskSupportOf(session, matter.exchange, String(params.name));
		if (support !== 'optional' && support !== 'required') return undefined;
		if (!declaresTasks(matter.declared)) return support === 'required' ? missingTasksCapability(request) : undefined;
		const answer = await this.send(session, matter.exchange, 'tools/call', { ...params, task: {} });
		if (!answer.result) return { ...answer, id: request.id };
		const created = answer.result.task as Task2025 | undefined;
		// The server may answer at once after all: a plain result.
		if (!created?.taskId) return { ...answer, id: request.id };
		this.follow(created.taskId, matter);
		return { jsonrpc: '2.0', id: request.id, result: { ...task2026Of(created), resultType: 'task' } };
	}

	/** Starts following a new task: its `tasks/result` opens now, and its session's requests about it are kept for the client. */
	private follow(taskId: string, matter: TaskMatter): void {
		const { session, exchange, owner } = matter;
		const stop = new AbortController();
		const outcome = this.send(session, exchange, 'tasks/result', { taskId }, AbortSignal.any([session.signal, stop.signal]));
		const task: BridgedTask = { taskId, owner, session, exchange, asked: new Map(), outcome, stop };
		session.claim('tasks', (message) => this.claimed(message, session));
		void outcome.then(() => setTimeout(() => this.forget(task), ENDED_TASK_TTL_MS).unref());
		session.signal.addEventListener('abort', () => this.forget(task), { once: true });
		this.tasks.set(taskId, task);
		for (const oldest of this.tasks.values()) {
			if (this.tasks.size <= MAX_TASKS) break;
			this.forget(oldest);
		}
	}

	private forget(task: BridgedTask): void {
		if (this.tasks.get(task.taskId) !== task) return;
		this.tasks.delete(task.taskId);
		task.stop.abort();
	}

	/** A server request about one of the session's tasks is kept for the task's client. */
	private claimed(message: JsonRpcMessage, session: ClientSession): boolean {
		if (!isRequest(message)) return false;
		const related = (message.params?._meta as Record<string, unknown> | undefined)?.[RELATED_TASK] as { taskId?: unknown } | undefined;
		const task = typeof related?.taskId === 'string' ? this.tasks.get(related.taskId) : undefined;
		if (!task || task.session !== session) return false;
		task.asked.set(`${typeof message.id}:${message.id}`, message);
		return true;
	}

	/** `tasks/get`: the server's view of the task, with the outcome or the questions the proxy holds for it. */
	private async get(request: JsonRpcRequest, task: BridgedTask): Promise<JsonRpcResponse> {
		const answer = await this.send(task.session, task.exchange, 'tasks/get', { taskId: task.taskId });
		if (!answer.result) return { ...answer, id: request.id };
		const status = (answer.result as unknown as Task2025).status;
		const current = task2026Of(answer.result as unknown as Task2025);
		if (['completed', 'failed', 'cancelled'].includes(status)) {
			if (status === 'cancelled') return { jsonrpc: '2.0', id: request.id, result: current };
			// 2026-07-28 says `failed` only of a JSON-RPC error; a tool's own error is a completed task.
			const outcome = await task.outcome;
			const ended = outcome.error ? { ...current, status: 'failed', error: outcome.error } : { ...current, status: 'completed', result: withoutRelatedTask(outcome.result ?? {}) };
			return { jsonrpc: '2.0', id: request.id, result: ended };
		}
		if (task.asked.size > 0) {
			const inputRequests = Object.fromEntries([...task.asked].map(([key, asked]) => [key, inputRequestOf(asked)]));
			return { jsonrpc: '2.0', id: request.id, result: { ...current, status: 'input_required', inputRequests } };
		}
		// Waiting for input the server has not sent yet: working, as far as the client can act.
		return { jsonrpc: '2.0', id: request.id, result: status === 'input_required' ? { ...current, status: 'working' } : current };
	}

	/** `tasks/update`: the client's answers go to the server as the responses to its requests; unknown keys are ignored. */
	private async update(request: JsonRpcRequest, task: BridgedTask, inputResponses: unknown): Promise<JsonRpcResponse> {
		const responses = typeof inputResponses === 'object' && inputResponses !== null ? (inputResponses as Record<string, unknown>) : {};
		for (const [key, result] of Object.entries(responses)) {
			const asked = task.asked.get(key);
			if (!asked || typeof result !== 'object' || result === null) continue;
			task.asked.delete(key);
			const refused = await this.notify({ message: { jsonrpc: '2.0', id: asked.id, result: result as Record<string, unknown> }, session: task.session, exchange: task.exchange });
			if (refused) return { ...refused, id: request.id };
		}
		return { jsonrpc: '2.0', id: request.id, result: {} };
	}

	/** Each tool's `execution.taskSupport`, from the session's `tools/list`, read again (at most every few seconds) when a tool is not in it. */
	private async taskSupportOf(session: ClientSession, exchange: HttpExchange, tool: string): Promise<string | undefined> {
		const known = this.support.get(session);
		if (known && (known.tools.has(tool) || performance.now() - known.at < TOOLS_REREAD_MS)) return known.tools.get(tool);
		const support = new Map<string, string>();
		let cursor: unknown;
		for (let page = 0; page < MAX_TOOL_PAGES; page++) {
			const listed = await this.send(session, exchange, 'tools/list', cursor === undefined ? {} : { cursor });
			for (const listedTool of (listed.result?.tools ?? []) as Array<{ name?: unknown; execution?: { taskSupport?: unknown } }>) {
				if (typeof listedTool.name === 'string') support.set(listedTool.name, String(listedTool.execution?.taskSupport ?? 'forbidden'));
			}
			cursor = listed.result?.nextCursor;
			if (typeof cursor !== 'string') break;
		}
		this.support.set(session, { tools: support, at: performance.now() });
		return support.get(tool);
	}

	/** A request of the proxy's own to the server, through the MCP chain like the client's. */
	private send(session: ClientSession, exchange: HttpExchange, method: string, params: Record<string, unknown>, signal: AbortSignal = session.signal): Promise<JsonRpcResponse> {
		const request: JsonRpcRequest = { jsonrpc: '2.0', id: `hangar-task-${this.nextId++}`, method, params };
		return this.handle({ request, session, signal, exchange });
	}
}

function takesToolTasks(tasks: unknown): boolean {
	return typeof (tasks as { requests?: { tools?: { call?: unknown } } } | undefined)?.requests?.tools?.call === 'object';
}

function declaresTasks(declared: Record<string, unknown>): boolean {
	return typeof (declared.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION] === 'object';
}

function missingTasksCapability(request: JsonRpcRequest): JsonRpcResponse {
	const why = request.method === 'tools/call' ? 'this tool runs only as a task' : 'tasks are followed';
	return errorResponse(request.id, MISSING_REQUIRED_CLIENT_CAPABILITY, `Missing required client capability: ${why} with the ${TASKS_EXTENSION} extension, which the request did not declare`, {
		requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
	});
}

/** A task as 2026-07-28 describes it. */
function task2026Of(task: Task2025): Record<string, unknown> {
	const converted: Record<string, unknown> = { taskId: task.taskId, status: task.status, createdAt: task.createdAt, lastUpdatedAt: task.lastUpdatedAt, ttlMs: task.ttl ?? null };
	if (task.statusMessage !== undefined) converted.statusMessage = task.statusMessage;
	if (task.pollInterval !== undefined) converted.pollIntervalMs = task.pollInterval;
	return converted;
}

/** A server request as an input request of a task: its method and params, without the task it relates to. */
function inputRequestOf(request: JsonRpcRequest): Record<string, unknown> {
	const params = request.params ? withoutRelatedTask(request.params) : undefined;
	return params === undefined ? { method: request.method } : { method: request.method, params };
}

function withoutRelatedTask(body: Record<string, unknown>): Record<string, unknown> {
	const meta = body._meta as Record<string, unknown> | undefined;
	if (!meta || !(RELATED_TASK in meta)) return body;
	const { [RELATED_TASK]: _related, ...rest } = meta;
	const { _meta: _old, ...without } = body;
	return Object.keys(rest).length ? { ...without, _meta: rest } : without;
}
