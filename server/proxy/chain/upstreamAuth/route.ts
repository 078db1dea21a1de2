/**
 * The proxy's sign-in endpoint for the services (`runspec/signin.ts`): `POST SIGNIN_PATH` with
 * the proxy's management token starts a sign-in or reports the pending one; `wait_ms` waits for it.
 */
import { timingSafeEqual } from 'node:crypto';
import type { HttpHandler } from '../chain.js';
import { BodyTooLarge, readBody, sendJson } from '../../../net/body.js';
import { SignInRequest } from '../../../runspec/signin.js';
import type { UpstreamAuthenticator } from './authenticator.js';

const MAX_BODY = 4096;
const NO_STORE = { 'Cache-Control': 'no-store' };

export function signInRoute(auth: UpstreamAuthenticator, token: string): HttpHandler {
	const expected = Buffer.from(`Bearer ${token}`);
	return async ({ request, response }) => {
		const given = Buffer.from(request.headers.authorization ?? '');
		const answer = (status: number, body: unknown) => sendJson(response, status, body, NO_STORE);
		if (given.length !== expected.length || !timingSafeEqual(given, expected)) return void answer(401, { error: 'unauthorized' });
		if (request.method !== 'POST') return void answer(405, { error: 'method not allowed' });
		let text: string;
		try {
			text = await readBody(request, MAX_BODY, String);
		} catch (error) {
			if (error instanceof BodyTooLarge) return void answer(413, { error: 'too large' });
			throw error;
		}
		let body: unknown;
		try {
			body = text ? JSON.parse(text) : {};
		} catch {
			return void answer(400, { error: 'the body is not JSON' });
		}
		const parsed = SignInRequest.safeParse(body);
		if (!parsed.success) return void answer(400, { error: parsed.error.issues[0]?.message });
		const started = await auth.signIn({ device: parsed.data.device });
		if (started.status !== 'pending' || !parsed.data.wait_ms) return void answer(200, started);
		answer(200, await auth.waitSignedIn(parsed.data.wait_ms));
	};
}
