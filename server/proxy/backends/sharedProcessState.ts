/**
 * What the clients of one shared stdio server process must not share, kept by the bridge:
 * each session's log level, resource subscriptions (counted, so that one client's
 * unsubscribe does not stop another's updates) and the tasks each session created.
 */
import { ErrorCode, errorResponse, RELATED_TASK, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../core/jsonrpc.js';

/** Log levels from the most verbose (RFC 5424 severities, as MCP names them). */
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Either an answer made here, or the request to send in place of the client's. */
export interface LocalAnswer {
	readonly response?: JsonRpcResponse;
	readonly forward?: JsonRpcRequest;
}

function taskIdOf(params: Record<string, unknown> | undefined): string | undefined {
	const id = params?.taskId;
	return typeof id === 'string' ? id : undefined;
}

export class SharedProcessState<Session> {
	/** Index in LEVELS of each session's `logging/setLevel`. */
	private readonly levels = new Map<Session, number>();
	private readonly subscribers = new Map<string, Set<Session>>();
	private readonly taskOwners = new Map<string, Session>();

	/** Requests answered from this state, or rewritten before they go to the server. */
	answerLocally(session: Session, request: JsonRpcRequest): LocalAnswer | undefined {
		switch (request.method) {
			case 'logging/setLevel': {
				const level = LEVELS.indexOf(String(request.params?.level));
				if (level < 0) return undefined; // the server answers the invalid level itself
				this.levels.set(session, level);
				// The server logs as verbosely as its most verbose client asked; each session gets its own share.
				return { forward: { ...request, params: { ...request.params, level: LEVELS[Math.min(...this.levels.values())] } } };
			}
			case 'resources/subscribe': {
				const uri = String(request.params?.uri);
				const subscribers = this.subscribers.get(uri) ?? new Set();
				const first = subscribers.size === 0;
				subscribers.add(session);
				this.subscribers.set(uri, subscribers);
				return first ? undefined : { response: { jsonrpc: '2.0', id: request.id, result: {} } };
			}
			case 'resources/unsubscribe': {
				const uri = String(request.params?.uri);
				const subscribers = this.subscribers.get(uri);
				if (!subscribers?.delete(session)) return { response: { jsonrpc: '2.0', id: request.id, result: {} } };
				if (subscribers.size > 0) return { response: { jsonrpc: '2.0', id: request.id, result: {} } };
				this.subscribers.delete(uri);
				return undefined;
			}
			case 'tasks/get':
			case 'tasks/result':
			case 'tasks/cancel': {
				const taskId = taskIdOf(request.params);
				if (taskId !== undefined && this.taskOwners.get(taskId) !== session) {
					return { response: errorResponse(request.id, ErrorCode.InvalidParams, `Task not found: ${taskId}`) };
				}
				return undefined;
			}
			default:
				return undefined;
		}
	}

	/** Learns from a response: the tasks a session created; trims `tasks/list` to the caller's own. */
	completed(session: Session, method: string, response: JsonRpcResponse): void {
		const result = response.result;
		if (!result) return;
		const task = result.task as { taskId?: unknown } | undefined;
		if (typeof task?.taskId === 'string') this.taskOwners.set(task.taskId, session);
		if (method === 'tasks/list' && Array.isArray(result.tasks)) {
			result.tasks = (result.tasks as Array<{ taskId?: string }>).filter((item) => item.taskId !== undefined && this.taskOwners.get(item.taskId) === session);
		}
	}

	/** Whether `params` names (`taskId`) a task `session` created. */
	ownsTask(session: Session, params: Record<string, unknown> | undefined): boolean {
		const taskId = taskIdOf(params);
		return taskId !== undefined && this.taskOwners.get(taskId) === session;
	}

	hasTasks(): boolean {
		return this.taskOwners.size > 0;
	}

	/** The owner of the task a server message names in its `related-task` metadata. */
	ownerOfRelatedTask(params: Record<string, unknown> | undefined): Session | undefined {
		const related = (params?._meta as Record<string, unknown> | undefined)?.[RELATED_TASK];
		return related ? this.taskOwners.get(taskIdOf(related as Record<string, unknown>) ?? '') : undefined;
	}

	/**
	 * The sessions a log message is for. Over stdio nothing ties a server's log to the client
	 * request it came of, and a server once asked for logs sends them unprompted too (between
	 * calls, or during another session's). So a session hears:
	 * - a log that comes while its calls are the only ones in flight (`caller`): at its level if
	 *   it asked for logs (`logging/setLevel`); if it never asked, as a server of its own would
	 *   send it, unless another session asked for logs at that level (the server may have sent
	 *   it for that one: it goes to those that asked);
	 * - any other log, the process's rather than one call's, only if it asked for logs at that
	 *   level. So a session that never asked hears no log another session's asking brought.
	 */
	listenersOf(message: JsonRpcNotification, sessions: ReadonlySet<Session>, caller: Session | undefined): Iterable<Session> {
		const owner = this.ownerOfRelatedTask(message.params);
		if (owner) return [owner];
		const level = LEVELS.indexOf(String(message.params?.level));
		const asked = (session: Session) => {
			const least = this.levels.get(session);
			return least !== undefined && (level < 0 || least <= level);
		};
		if (caller && this.levels.has(caller)) return asked(caller) ? [caller] : [];
		const listening = [...sessions].filter(asked);
		return caller && listening.length === 0 ? [caller] : listening;
	}

	/** The sessions a server notification other than a log message is for. */
	recipientsOf(notification: JsonRpcNotification, sessions: ReadonlySet<Session>): Iterable<Session> {
		const owner = this.ownerOfRelatedTask(notification.params);
		if (owner) return [owner];
		switch (notification.method) {
			case 'notifications/resources/updated':
				return this.subscribers.get(String(notification.params?.uri)) ?? [];
			case 'notifications/tasks/status': {
				const taskOwner = this.taskOwners.get(taskIdOf(notification.params) ?? '');
				return taskOwner ? [taskOwner] : [];
			}
			default:
				return sessions;
		}
	}

	/** Forgets a session that left; returns the requests (without id) the server must now receive. */
	forget(session: Session, remaining: ReadonlySet<Session>): Array<Omit<JsonRpcRequest, 'id' | 'jsonrpc'>> {
		const requests: Array<Omit<JsonRpcRequest, 'id' | 'jsonrpc'>> = [];
		this.levels.delete(session);
		for (const [uri, subscribers] of this.subscribers) {
			if (!subscribers.delete(session) || subscribers.size > 0) continue;
			this.subscribers.delete(uri);
			if (remaining.size > 0) requests.push({ method: 'resources/unsubscribe', params: { uri } });
		}
		for (const [taskId, owner] of this.taskOwners) if (owner === session) this.taskOwners.delete(taskId);
		return requests;
	}
}
