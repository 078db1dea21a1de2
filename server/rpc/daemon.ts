/**
 * `hangar daemon`: the operation table served as JSON-RPC 2.0 over stdio with LSP framing.
 *
 * LSP lifecycle: `initialize` (answers with the server's name, version and methods),
 * `initialized`, `shutdown`, `exit`. Requests before `initialize` or after `shutdown` are
 * refused as LSP servers refuse them. `$/cancelRequest` aborts the service's AbortSignal;
 * a `workDoneToken` in the params turns on `$/progress` reports. Logs go to stderr only.
 * On `exit` or the end of its input (`printf '…' | hangar daemon`) it first answers every
 * request read before, then exits with LSP's `exit` code: 0 after `shutdown`, else 1.
 *
 * Editors start a daemon per window, so `initialize` is answered from the manifest of
 * method names; the services load right after (zod only for params the build's plain schemas
 * leave to it: see dispatch.ts).
 */
import type { Readable, Writable } from 'node:stream';
import {
	CancellationToken,
	createMessageConnection,
	ErrorCodes,
	ResponseError,
	StreamMessageWriter,
	type Message,
	type MessageConnection,
	type NotificationMessage,
} from 'vscode-jsonrpc/node';
import type { ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageserver-protocol';
import type { InitializeResult } from '../../protocol/client.js';
import type { HangarError } from '../../protocol/errors.js';
import { contextFor, type Progress } from '../context.js';
import type { Dispatcher } from '../dispatch.js';
import type { Environment } from '../environment.js';
import { isAlive } from '../store/lock.js';
import { VERSION } from '../version.js';
import { FramedMessageReader } from './framing.js';
import type { Manifest } from '../manifest.js';

/** LSP error codes (`LSPErrorCodes` of vscode-languageserver-protocol, whose runtime we do not load). */
const SERVER_NOT_INITIALIZED = -32002;
const REQUEST_FAILED = -32803;
const REQUEST_CANCELLED = -32800;
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
const PARENT_CHECK_MS = 3_000;

export interface DaemonOptions {
	readonly input: Readable;
	readonly output: Writable;
	/** Called with the exit code once the client sent `exit` or closed the stream. */
	readonly onExit: (code: number) => void;
}

export function startDaemon(
	environment: Environment,
	manifest: Manifest,
	loadDispatcher: () => Promise<Dispatcher>,
	options: DaemonOptions,
): MessageConnection {
	const methods = new Set(manifest.methods);
	let dispatcher: Promise<Dispatcher> | undefined;
	const services = () => (dispatcher ??= loadDispatcher());
	const writer = new TrackedWriter(options.output);
	// Compared by identity: a client's message is parsed from JSON, never this object.
	const endOfInput: NotificationMessage = { jsonrpc: '2.0', method: '$/hangar/endOfInput', params: {} };
	const reader = new FramedMessageReader(options.input, {
		maxMessageBytes: MAX_MESSAGE_BYTES,
		reject: (response) => void writer.write(response),
		onDeliveryError: (error) => environment.log.warn(`message dropped: ${(error as Error)?.message ?? error}`),
		endOfInput,
	});
	const connection = createMessageConnection(reader, writer, {
		error: (message) => environment.log.error(message),
		warn: (message) => environment.log.warn(message),
		info: (message) => environment.log.debug(message),
		log: (message) => environment.log.debug(message),
	});

	let state: 'created' | 'initialized' | 'shutdown' = 'created';
	let exited = false;
	const exit = (code: number) => {
		if (exited) return;
		exited = true;
		connection.dispose();
		options.onExit(code);
	};
	// Requests being handled, so that an exit waits for their answers.
	const handling = new Set<Promise<unknown>>();
	let ending = false;
	/** Exits once every request read so far is answered and its answer written. */
	const exitAfterAnswers = async (code: number) => {
		if (ending) return;
		ending = true;
		while (handling.size > 0) await Promise.allSettled([...handling]);
		// The connection writes an answer right after its handler settles.
		await new Promise((resolve) => setImmediate(resolve));
		await writer.flushed();
		exit(code);
	};
	const exitCode = () => (state === 'shutdown' ? 0 : 1);

	connection.onRequest('initialize', (params: { processId?: number | null } | undefined): InitializeResult => {
		state = 'initialized';
		if (typeof params?.processId === 'number') watchParent(params.processId, () => exit(1));
		setImmediate(services); // after the answer is written
		return {
			serverInfo: { name: 'hangar', version: VERSION },
			capabilities: { methods: [...manifest.methods], notifications: [...manifest.notifications] },
		};
	});
	connection.onNotification('initialized', () => undefined);
	// The progress we report is cancellable: cancelling it cancels the request it belongs to.
	const byProgressToken = new Map<ProgressToken, AbortController>();
	connection.onNotification('window/workDoneProgress/cancel', (params: { token?: unknown } | null) => {
		const token = params?.token;
		if (typeof token === 'string' || typeof token === 'number') byProgressToken.get(token)?.abort();
	});
	connection.onRequest('shutdown', () => {
		state = 'shutdown';
		return null;
	});
	connection.onNotification('exit', () => void exitAfterAnswers(exitCode()));
	connection.onNotification(endOfInput.method, (params: unknown) => {
		if (params === endOfInput.params) void exitAfterAnswers(exitCode());
	});

	connection.onRequest((method: string, params: unknown, token: CancellationToken) => {
		const answer = handle(method, params, token);
		handling.add(answer);
		const done = () => handling.delete(answer);
		answer.then(done, done);
		return answer;
	});
	const handle = async (method: string, params: unknown, token: CancellationToken): Promise<unknown> => {
		if (!methods.has(method)) {
			throw new ResponseError(ErrorCodes.MethodNotFound, `unknown method ${method}`);
		}
		if (state === 'created') throw new ResponseError(SERVER_NOT_INITIALIZED, 'server not initialized; send initialize first');
		if (state === 'shutdown' || ending) throw new ResponseError(ErrorCodes.InvalidRequest, 'server is shutting down');
		const controller = new AbortController();
		const subscription = token.onCancellationRequested(() => controller.abort());
		const progressToken = (params as { workDoneToken?: unknown } | null)?.workDoneToken;
		const cancellable = typeof progressToken === 'string' || typeof progressToken === 'number';
		if (cancellable) byProgressToken.set(progressToken, controller);
		try {
			const progress = progressFor(connection, params);
			return await (await services()).call(method, operationParams(params), contextFor(controller.signal, progress));
		} catch (error) {
			throw toResponseError(error as HangarError);
		} finally {
			subscription.dispose();
			if (cancellable && byProgressToken.get(progressToken) === controller) byProgressToken.delete(progressToken);
		}
	};

	const unsubscribe = environment.notifier.subscribe((method, params) => {
		if (state === 'initialized') void connection.sendNotification(method, params);
	});
	// The end of input exits through `endOfInput`, after the messages read before it.
	connection.onClose(unsubscribe);
	connection.listen();
	return connection;
}

/** A writer that knows when everything handed to it is written. */
class TrackedWriter extends StreamMessageWriter {
	private last: Promise<unknown> = Promise.resolve();

	override write(message: Message): Promise<void> {
		const written = super.write(message);
		// Writes are serialised: the last one done means all are.
		this.last = written.catch(() => undefined);
		return written;
	}

	flushed(): Promise<unknown> {
		return this.last;
	}
}

function toResponseError(error: HangarError): ResponseError<HangarError['data']> {
	const code =
		error.status === 400
			? ErrorCodes.InvalidParams
			: error.status === 499
				? REQUEST_CANCELLED
				: REQUEST_FAILED;
	return new ResponseError(code, error.message, error.data);
}

/** The operation's own params: the LSP `workDoneToken` is the daemon's, not a field the operation's schema knows. */
function operationParams(params: unknown): unknown {
	if (typeof params !== 'object' || params === null || Array.isArray(params) || !('workDoneToken' in params)) return params;
	const { workDoneToken: _token, ...own } = params as Record<string, unknown>;
	return own;
}

/** `$/progress` reports for a request whose params carry a `workDoneToken`. */
function progressFor(connection: MessageConnection, params: unknown): Progress | undefined {
	const token = (params as { workDoneToken?: ProgressToken } | null)?.workDoneToken;
	if (typeof token !== 'string' && typeof token !== 'number') return undefined;
	const send = (value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) =>
		void connection.sendNotification('$/progress', { token, value });
	return {
		begin: (title, message, percentage) => send({ kind: 'begin', title, cancellable: true, message, percentage }),
		report: (message, percentage) => send({ kind: 'report', message, percentage }),
		end: (message) => send({ kind: 'end', message }),
	};
}

/** LSP: a server exits when the process that started it is gone (exited, even if never reaped). */
function watchParent(pid: number, onGone: () => void): void {
	const timer = setInterval(() => {
		if (isAlive(pid)) return;
		clearInterval(timer);
		onGone();
	}, PARENT_CHECK_MS);
	timer.unref();
}
