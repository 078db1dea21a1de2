/**
 * A client of `hangar daemon` typed from the operation table: `request(InstallSkill, …)`
 * takes that row's params and resolves to its result. Errors come back as `HangarError`
 * with the status and code the service chose. Used by the VS Code extension and the tests.
 */
import { CancellationTokenSource, type MessageConnection } from 'vscode-jsonrpc';
import type { z } from 'zod';
import { HangarError } from './errors.js';
import type { NotificationDefinition, OperationDefinition, ParamsOf, ResultOf } from './operation.js';

export interface RequestOptions {
	/** Aborting sends `$/cancelRequest`. */
	readonly signal?: AbortSignal;
	/** Asks the daemon for `$/progress` reports under this token. */
	readonly workDoneToken?: string | number;
}

export interface InitializeResult {
	serverInfo: { name: string; version: string };
	capabilities: { methods: string[]; notifications: string[] };
}

export class HangarClient {
	constructor(readonly connection: MessageConnection) {}

	/** LSP handshake: `initialize` then `initialized`. */
	async initialize(clientName: string): Promise<InitializeResult> {
		const result = await this.connection.sendRequest<InitializeResult>('initialize', {
			processId: process.pid,
			clientInfo: { name: clientName },
			capabilities: {},
		});
		await this.connection.sendNotification('initialized', {});
		return result;
	}

	async request<O extends OperationDefinition>(operation: O, params: ParamsOf<O>, options: RequestOptions = {}): Promise<ResultOf<O>> {
		const source = new CancellationTokenSource();
		const onAbort = () => source.cancel();
		options.signal?.addEventListener('abort', onAbort, { once: true });
		const sent = options.workDoneToken === undefined ? params : { ...(params as object), workDoneToken: options.workDoneToken };
		try {
			return await this.connection.sendRequest<ResultOf<O>>(operation.method, sent, source.token);
		} catch (error) {
			throw asHangarError(error);
		} finally {
			options.signal?.removeEventListener('abort', onAbort);
			source.dispose();
		}
	}

	onNotification<P extends z.ZodType>(definition: NotificationDefinition<P>, handler: (params: z.output<P>) => void): { dispose(): void } {
		return this.connection.onNotification(definition.method, handler);
	}

	/** LSP shutdown: `shutdown` then `exit`. */
	async shutdown(): Promise<void> {
		await this.connection.sendRequest('shutdown');
		await this.connection.sendNotification('exit');
		this.connection.dispose();
	}
}

function asHangarError(error: unknown): unknown {
	const data = (error as { data?: unknown })?.data;
	if (HangarError.isErrorData(data)) {
		return new HangarError(data.status, (error as Error).message, data.code, { cause: error, retryAfter: data.retryAfter });
	}
	return error;
}
