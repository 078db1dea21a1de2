/**
 * The redirect target of a sign-in: a listener on 127.0.0.1 only (never another interface),
 * on the configured `callback_port` or a random one, answering `/callback`. A redirect whose
 * `state` is not the one sent is refused and the sign-in goes on waiting.
 */
import { createServer, type Server } from 'node:http';
import { quoted, UpstreamAuthError } from '../../core/upstreamAuthError.js';

export interface CallbackResult {
	readonly code: string;
}

export class CallbackListener {
	private constructor(
		private readonly server: Server,
		readonly redirectUri: string,
		readonly port: number,
	) {}

	/** Listens on 127.0.0.1:`port` (0: any free port). */
	static async open(port: number): Promise<CallbackListener> {
		const server = createServer();
		await new Promise<void>((resolve, reject) => {
			server.once('error', (error: Error) => reject(new UpstreamAuthError(`cannot listen for the sign-in redirect on 127.0.0.1:${port}: ${error.message}`)));
			server.listen(port, '127.0.0.1', () => resolve());
		});
		const bound = (server.address() as { port: number }).port;
		return new CallbackListener(server, `http://127.0.0.1:${bound}/callback`, bound);
	}

	/** Resolves with the code of the first redirect carrying `state`; rejects on an error the server sent. */
	wait(state: string): Promise<CallbackResult> {
		return new Promise((resolve, reject) => {
			this.server.removeAllListeners('request');
			this.server.on('request', (request, response) => {
				const url = new URL(request.url ?? '/', 'http://127.0.0.1');
				const page = (status: number, text: string) =>
					response.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(`<!DOCTYPE html><title>Hangar</title><p>${text}</p>`);
				if (url.pathname !== '/callback') return page(404, 'Not found.');
				if (url.searchParams.get('state') !== state) return page(400, 'This sign-in link is stale or was not started by Hangar.');
				const error = url.searchParams.get('error');
				if (error) {
					page(400, 'The sign-in failed. You can close this window.');
					const description = url.searchParams.get('error_description');
					return reject(new UpstreamAuthError(`the authorization server refused the sign-in: ${quoted(error)}${description ? ` (${quoted(description)})` : ''}`));
				}
				const code = url.searchParams.get('code');
				if (!code) return page(400, 'The redirect carries no authorization code.');
				page(200, 'Signed in. You can close this window and return to Hangar.');
				resolve({ code });
			});
		});
	}

	close(): void {
		this.server.close();
		this.server.closeAllConnections();
	}
}
