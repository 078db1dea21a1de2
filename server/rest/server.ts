/**
 * `hangar serve`: the operation table over HTTP on ToolHive's paths.
 *
 * Params come from the path, the query string (the names a row lists) and the JSON body,
 * merged and validated by the row's schema. Errors are `{code, message}` with the row's
 * status. Bodies must be `application/json` (415 otherwise: a browser can send `text/plain`
 * cross-site without a preflight) and at most 1 MiB (413). Bound to 127.0.0.1 by default,
 * behind RequestGuard (Host, Origin, Sec-Fetch-Site).
 */
import { BodyTooLarge, readCapped } from '../net/body.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { HangarError } from '../../protocol/errors.js';
import { describeJsonError, JsonTooDeep, parseJsonBounded } from '../json.js';
import type { OperationDefinition } from '../../protocol/operation.js';
import { contextFor } from '../context.js';
import type { Dispatcher } from '../dispatch.js';
import type { Environment } from '../environment.js';
import { RequestGuard } from '../net/guard.js';
import { openApiDocument } from './openapi.js';
import { Router } from './router.js';

export const MAX_BODY_BYTES = 1024 * 1024;

const COMMON_HEADERS = {
	'X-Content-Type-Options': 'nosniff',
	'Cross-Origin-Resource-Policy': 'same-origin',
};

export interface RestServerOptions {
	readonly host: string;
	readonly port: number;
	/** A UNIX socket path; overrides host and port. */
	readonly socket?: string;
	/** Browser origins allowed besides the server's own. */
	readonly allowedOrigins?: readonly string[];
}

export class RestServer {
	private readonly router: Router;
	private readonly server: Server;
	private guard = new RequestGuard('127.0.0.1', undefined);
	private openApi: string | undefined;

	constructor(
		private readonly environment: Environment,
		private readonly dispatcher: Dispatcher,
		/** The whole table (`Dispatcher.operations`): the routes and the OpenAPI document. */
		private readonly operations: readonly OperationDefinition[],
	) {
		this.router = new Router(operations);
		this.server = createServer((request, response) => void this.handle(request, response));
		this.server.keepAliveTimeout = 65_000;
		this.server.headersTimeout = 10_000;
		this.server.requestTimeout = 11 * 60_000;
	}

	/** Starts listening; resolves to the address clients use. */
	async listen(options: RestServerOptions): Promise<string> {
		await new Promise<void>((resolve, reject) => {
			this.server.once('error', reject);
			if (options.socket) this.server.listen(options.socket, resolve);
			else this.server.listen(options.port, options.host, resolve);
		});
		if (options.socket) {
			this.guard = new RequestGuard('localhost', undefined, { allowedOrigins: options.allowedOrigins });
			return `unix:${options.socket}`;
		}
		const address = this.server.address();
		const port = typeof address === 'object' && address ? address.port : options.port;
		this.guard = new RequestGuard(options.host, port, { allowedOrigins: options.allowedOrigins });
		const host = options.host.includes(':') ? `[${options.host}]` : options.host;
		return `http://${host}:${port}`;
	}

	close(): Promise<void> {
		return new Promise((resolve) => {
			this.server.close(() => resolve());
			this.server.closeIdleConnections();
		});
	}

	private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
		const started = performance.now();
		response.once('close', () => this.logRequest(request, response, started));
		try {
			const refusal = this.guard.check(request);
			if (refusal) throw new HangarError(403, refusal, 'forbidden');
			const url = new URL(request.url ?? '/', 'http://localhost');
			if (request.method === 'GET' && url.pathname === '/api/openapi.json') {
				this.openApi ??= JSON.stringify(openApiDocument(this.operations));
				return send(response, 200, this.openApi);
			}
			const match = this.router.match(request.method ?? 'GET', url.pathname);
			if (match.kind === 'none') throw HangarError.notFound(`no route for ${request.method} ${url.pathname}`);
			if (match.kind === 'wrong-verb') {
				response.setHeader('Allow', match.allowed.join(', '));
				throw new HangarError(405, `${request.method} is not allowed on ${url.pathname}`);
			}
			const params = await this.paramsOf(request, url, match.row, match.params);
			const controller = new AbortController();
			response.on('close', () => {
				if (!response.writableFinished) controller.abort();
			});
			const result = await this.dispatcher.call(match.row.method, params, contextFor(controller.signal));
			this.sendResult(response, match.row, params, result);
		} catch (error) {
			this.sendError(response, error);
		}
	}

	private async paramsOf(
		request: IncomingMessage,
		url: URL,
		row: OperationDefinition,
		rawPathParams: Record<string, string>,
	): Promise<Record<string, unknown>> {
		const body = row.rest.verb === 'GET' ? {} : await readJsonBody(request);
		const params: Record<string, unknown> = { ...body };
		for (const name of row.rest.query ?? []) {
			const value = url.searchParams.get(name);
			if (value !== null) params[name] = value;
		}
		for (const [name, raw] of Object.entries(rawPathParams)) {
			try {
				params[name] = decodeURIComponent(raw);
			} catch {
				throw HangarError.badRequest(`invalid encoding of path parameter ${name}`);
			}
		}
		return params;
	}

	private sendResult(response: ServerResponse, row: OperationDefinition, params: unknown, result: unknown): void {
		const { status, response: kind = 'json', location } = row.rest;
		if (location) response.setHeader('Location', location(params, result));
		if (status === 204 || kind === 'empty') {
			response.writeHead(status, COMMON_HEADERS).end();
		} else if (kind === 'text') {
			response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'text/plain' }).end(String(result));
		} else {
			send(response, status, JSON.stringify(result));
		}
	}

	/** One line per request: verb, path (never the query, which may carry values), status, time. */
	private logRequest(request: IncomingMessage, response: ServerResponse, started: number): void {
		const path = (request.url ?? '/').split('?')[0];
		const status = response.writableFinished ? String(response.statusCode) : 'aborted';
		this.environment.log.info(`${request.method} ${path} ${status} ${(performance.now() - started).toFixed(1)} ms`);
	}

	private sendError(response: ServerResponse, error: unknown): void {
		if (response.headersSent || response.destroyed) return;
		const failure =
			error instanceof HangarError ? error : new HangarError(500, 'internal error', 'internal_error', { cause: error });
		if (!(error instanceof HangarError)) this.environment.log.error(`REST request failed: ${(error as Error)?.stack ?? error}`);
		if (failure.status === 499) {
			response.destroy(); // the client went away; nobody is left to answer
			return;
		}
		if (failure.retryAfter !== undefined) response.setHeader('Retry-After', String(failure.retryAfter));
		send(response, failure.status, JSON.stringify({ code: failure.code, message: failure.message }));
	}
}

function send(response: ServerResponse, status: number, json: string): void {
	response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'application/json' }).end(json);
}

/** True when the request carries a body (a length above 0, or chunks). */
function hasBody(request: IncomingMessage): boolean {
	return Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
}

async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
	const type = request.headers['content-type'];
	const mediaType = type?.split(';')[0]!.trim().toLowerCase();
	if ((type !== undefined || hasBody(request)) && mediaType !== 'application/json') {
		request.resume();
		throw new HangarError(415, `request bodies must be application/json${type ? `, not ${mediaType}` : '; set Content-Type'}`);
	}
	const declared = Number(request.headers['content-length'] ?? 0);
	if (declared > MAX_BODY_BYTES) {
		request.resume();
		throw new HangarError(413, `request body exceeds ${MAX_BODY_BYTES} bytes`);
	}
	let raw: Buffer;
	try {
		raw = await readCapped(request, MAX_BODY_BYTES);
	} catch (error) {
		if (!(error instanceof BodyTooLarge)) throw error;
		request.resume();
		throw new HangarError(413, `request body exceeds ${MAX_BODY_BYTES} bytes`);
	}
	const text = raw.toString('utf8').trim();
	if (!text) return {};
	let body: unknown;
	try {
		body = parseJsonBounded(text);
	} catch (error) {
		if (error instanceof JsonTooDeep) throw HangarError.badRequest(`invalid request body: ${error.message}`, 'invalid_body');
		throw HangarError.badRequest(`invalid request body: ${describeJsonError(error)}`, 'invalid_body');
	}
	if (typeof body !== 'object' || body === null || Array.isArray(body)) {
		throw HangarError.badRequest('invalid request body: expected a JSON object', 'invalid_body');
	}
	return body as Record<string, unknown>;
}
