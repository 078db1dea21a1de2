/**
 * An HTTP front for a real server (a registry) that injects the faults the real server
 * cannot produce on demand: rate limits, errors, silence, slowness and redirects. Requests it
 * does not intercept are forwarded untouched; every request is recorded with its headers.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen } from './registry.js';

export interface RecordedRequest {
	readonly method: string;
	readonly path: string;
	readonly headers: IncomingHttpHeaders;
}

export type Fault =
	| { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
	/** Accepts the request and never answers. */
	| { kind: 'hang' }
	/** Forwards, but sends the response body `bytesPerSecond` at a time. */
	| { kind: 'slow'; bytesPerSecond: number }
	| { kind: 'redirect'; status: number; location: string };

export interface FaultProxy {
	/** `127.0.0.1:PORT`. */
	readonly host: string;
	readonly url: string;
	readonly requests: RecordedRequest[];
	/** Decides per request; undefined forwards it. */
	fault: ((request: RecordedRequest) => Fault | undefined) | undefined;
	stop(): Promise<void>;
}

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
	const target = new URL(upstream);
	const hanging = new Set<ServerResponse>();
	const proxy: FaultProxy = {
		host: '',
		url: '',
		requests: [],
		fault: undefined,
		stop: async () => {
			for (const response of hanging) response.destroy();
			await new Promise((resolve) => server.close(resolve));
			server.closeAllConnections();
		},
	};
	const server = createServer((request: IncomingMessage, response: ServerResponse) => {
		const recorded = { method: request.method ?? 'GET', path: request.url ?? '/', headers: request.headers };
		proxy.requests.push(recorded);
		const fault = proxy.fault?.(recorded);
		if (fault?.kind === 'status') {
			request.resume();
			response.writeHead(fault.status, fault.headers).end(fault.body ?? '');
			return;
		}
		if (fault?.kind === 'hang') {
			request.resume();
			hanging.add(response);
			return;
		}
		if (fault?.kind === 'redirect') {
			request.resume();
			response.writeHead(fault.status, { Location: fault.location }).end();
			return;
		}
		const forwarded = httpRequest(
			{ host: target.hostname, port: target.port, method: request.method, path: request.url, headers: { ...request.headers, host: target.host } },
			async (upstreamResponse) => {
				const headers = { ...upstreamResponse.headers };
				// Locations the registry hands out must point back through the proxy.
				if (typeof headers.location === 'string') headers.location = headers.location.replace(target.origin, proxy.url);
				response.writeHead(upstreamResponse.statusCode ?? 502, headers);
				if (fault?.kind !== 'slow') return void upstreamResponse.pipe(response);
				hanging.add(response);
				for await (const chunk of upstreamResponse as AsyncIterable<Buffer>) {
					for (let offset = 0; offset < chunk.length && !response.destroyed; offset += fault.bytesPerSecond / 10) {
						response.write(chunk.subarray(offset, offset + fault.bytesPerSecond / 10));
						await new Promise((resolve) => setTimeout(resolve, 100));
					}
				}
				response.end();
			},
		);
		forwarded.on('error', () => response.destroy());
		request.pipe(forwarded);
	});
	const port = await listen(server);
	Object.assign(proxy, { host: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}` });
	return proxy;
}
