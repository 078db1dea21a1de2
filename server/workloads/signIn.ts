/**
 * `workloads/signIn`: a remote workload's proxy signs in to its OAuth-protected server. The
 * proxy holds the OAuth client (proxy/chain/upstreamAuth/); this asks it, over its sign-in endpoint
 * (`runspec/signin.ts`), to start a sign-in (or report the pending one) and, with `wait`, to
 * answer once it completed. Nothing secret passes: the answer is a URL or a device code.
 */
import { HangarError } from '../../protocol/errors.js';
import type { WorkloadSignInResult } from '../../protocol/protocol.workloads.js';
import { SIGNIN_PATH, SignInAnswer } from '../runspec/signin.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';
import { clientUrlOf } from '../runspec/urls.js';
import { liveProxy } from './liveProxy.js';

const ANSWER_MS = 30_000;

export async function signIn(store: WorkloadStore, config: StoredWorkload, params: { device?: boolean; wait?: number }, signal?: AbortSignal): Promise<WorkloadSignInResult> {
	if (!config.remote_url) throw HangarError.conflict(`workload ${config.name} is not a remote server: only a remote server signs in`, 'not_remote');
	if (config.remote_auth_config?.bearer_token || config.remote_auth_config?.bearer_token_file) {
		throw HangarError.conflict(`workload ${config.name} authenticates with a static bearer token`, 'static_token');
	}
	const proxy = await liveProxy(store, config.name);
	if (!proxy?.stats_token) throw HangarError.conflict(`workload ${config.name} is not running: start it first (hangar restart ${config.name})`, 'not_running');
	const waitMs = (params.wait ?? 0) * 1000;
	const timeout = AbortSignal.timeout(waitMs + ANSWER_MS);
	let body: unknown;
	try {
		const response = await fetch(new URL(SIGNIN_PATH, clientUrlOf(config)), {
			method: 'POST',
			headers: { Authorization: `Bearer ${proxy.stats_token}`, 'Content-Type': 'application/json' },
			body: JSON.stringify({ device: params.device, wait_ms: waitMs }),
			signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
		});
		if (response.status === 404) throw HangarError.conflict(`the proxy of workload ${config.name} manages no OAuth sign-in (restart the workload)`, 'no_oauth');
		if (!response.ok) throw new Error(`HTTP ${response.status}`);
		body = await response.json();
	} catch (error) {
		signal?.throwIfAborted();
		if (error instanceof HangarError) throw error;
		throw new HangarError(503, `the proxy of workload ${config.name} did not answer the sign-in: ${(error as Error).message}`);
	}
	return { name: config.name, ...SignInAnswer.parse(body) };
}
