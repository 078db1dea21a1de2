/**
 * The Docker Engine API calls a workload's proxy makes (inspect a container, start it, attach
 * to it, run its command again, a network's gateway), over node:http: dockerode would bring
 * its gRPC, protobuf and SSH modules into the memory of every proxy. An `ssh://` engine is
 * reached through dockerode's transport (`modemEngine`), loaded only for it.
 *
 * Failures look like dockerode's (`statusCode`, `json`, and the socket's `code`), so that
 * `docker.ts` reads both alike.
 */
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import { connect } from 'node:net';
import { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';

export interface EngineApi {
	/** A call answering JSON (or nothing): the parsed answer; a status of 300 or more is a failure. */
	json<T>(method: 'GET' | 'POST', path: string, body?: object): Promise<T>;
	/**
	 * The headers of the engine's answer to `GET /_ping` (where it names itself, at once: its
	 * `/version` asks its components, 20 ms on Docker and 1.5 s on Podman 4.3 here); undefined
	 * where the transport does not show them.
	 */
	pingHeaders(): Promise<IncomingHttpHeaders | undefined>;
	/** A call whose connection the engine hands over (`Upgrade: tcp`) for a container's stdio, left open. */
	hijack(path: string, body?: object): Promise<Duplex>;
}

/** An engine failure as dockerode reports it. */
export class EngineStatusError extends Error {
	constructor(
		readonly statusCode: number,
		readonly json: { message?: string } | null,
	) {
		super(`(HTTP code ${statusCode}) - ${json?.message ?? 'no message'}`);
	}
}

/** The engine at `options` (unix socket, named pipe, tcp or https), over node:http. */
export function httpEngine(options: Dockerode.DockerOptions): EngineApi {
	const send = (method: string, path: string, headers: Record<string, string | number>): ClientRequest => {
		const base: RequestOptions = { method, path, headers };
		if (options.socketPath) {
			const socketPath = options.socketPath as string;
			// Connected here, not by an Agent: an Agent asks of every request whether its host
			// (`localhost`) is an IP address, and the first such check compiles Node's IPv6
			// expression, 20–40 ms of a command's start on this machine.
			return httpRequest({ ...base, createConnection: () => connect(socketPath) });
		}
		const target = { ...base, host: options.host, port: options.port };
		if (options.protocol !== 'https') return httpRequest(target);
		// node:https (and OpenSSL's set-up) only for an engine over TLS: every proxy would hold it.
		return process.getBuiltinModule('node:https').request({ ...target, ca: options.ca, cert: options.cert, key: options.key });
	};
	return {
		json: <T>(method: 'GET' | 'POST', path: string, body?: object) =>
			new Promise<T>((resolve, reject) => {
				const payload = body === undefined ? undefined : JSON.stringify(body);
				const request = send(method, path, payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
				request.once('error', reject);
				request.once('response', (response) => {
					answerOf(response).then(({ status, value }) => (status >= 300 ? reject(new EngineStatusError(status, value as { message?: string } | null)) : resolve(value as T)), reject);
				});
				request.end(payload);
			}),
		pingHeaders: () =>
			new Promise<IncomingHttpHeaders>((resolve, reject) => {
				const request = send('GET', '/_ping', {});
				request.once('error', reject);
				request.once('response', (response) => {
					if (response.statusCode! >= 300) return void answerOf(response).then(({ status, value }) => reject(new EngineStatusError(status, value as { message?: string } | null)), reject);
					response.resume(); // the body is `OK`
					resolve(response.headers);
				});
				request.end();
			}),
		hijack: (path, body) =>
			new Promise<Duplex>((resolve, reject) => {
				// A call without a body sends none: Podman 4.3's compat attach hands the body's bytes
				// to the container's stdin (dockerode's `{}` would then prefix the first request).
				const payload = body === undefined ? '' : JSON.stringify(body);
				const type: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json' };
				const request = send('POST', path, { ...type, 'Content-Length': Buffer.byteLength(payload), Connection: 'Upgrade', Upgrade: 'tcp' });
				request.once('error', reject);
				request.once('upgrade', (_response, socket, head) => {
					if (head.length > 0) socket.unshift(head);
					resolve(socket);
				});
				// An engine that does not upgrade streams over the response instead; a refusal answers JSON.
				request.once('response', (response) => {
					if (response.statusCode! >= 300) answerOf(response).then(({ status, value }) => reject(new EngineStatusError(status, value as { message?: string } | null)), reject);
					else resolve(Duplex.from({ readable: response, writable: request }));
				});
				if (payload) request.write(payload);
				else request.flushHeaders();
			}),
	};
}

async function answerOf(response: IncomingMessage): Promise<{ status: number; value: unknown }> {
	const chunks: Buffer[] = [];
	for await (const chunk of response) chunks.push(chunk as Buffer);
	const text = Buffer.concat(chunks).toString('utf8');
	let value: unknown = null;
	try {
		value = text ? JSON.parse(text) : null;
	} catch {
		value = { message: text.trim() };
	}
	return { status: response.statusCode ?? 0, value };
}

/** The same calls through dockerode's connection (its SSH transport, for `ssh://` engines). */
export function modemEngine(docker: Dockerode): EngineApi {
	const { modem } = docker as unknown as { modem: { dial(options: object, callback: (error: Error | null, data: unknown) => void): void } };
	const dial = <T>(options: object) => new Promise<T>((resolve, reject) => modem.dial(options, (error, data) => (error ? reject(error) : resolve(data as T))));
	const statusCodes = { 200: true, 201: true, 204: true };
	return {
		json: (method, path, body) => dial({ ...target(path, body), method, statusCodes, allowEmpty: true }),
		pingHeaders: async () => undefined,
		// An empty `file` is the modem's way to send no body (it would send the query's options).
		hijack: (path, body) => dial({ ...target(path, body), ...(body === undefined && { file: Buffer.alloc(0) }), method: 'POST', statusCodes, isStream: true, hijack: true, openStdin: true }),
	};
}

/** The modem takes a query as options after a bare `?` (and sends those options as the body too, as dockerode's calls do). */
function target(path: string, body: object | undefined): { path: string; options: object } {
	const [bare, query] = path.split('?');
	return query === undefined ? { path: bare!, options: body ?? {} } : { path: `${bare}?`, options: { ...Object.fromEntries(new URLSearchParams(query)), ...body } };
}
