/**
 * ToolHive's webhooks in the chain, for each `tools/call`, `prompts/get` and `resources/read`:
 * the mutating ones in order (each may answer a JSON Patch on the call's arguments, patch.ts),
 * then the validating ones (each answers allowed, or denied with a reason the client is shown).
 * Request and answer are ToolHive's (pkg/webhook/types.go): the body is `{version, uid,
 * timestamp, principal, mcp_request, context}`, the answer `{allowed, reason, message, code,
 * patch_type, patch}`, and only `allowed: true` lets the call on. An HTTP 422 denies the call
 * whatever the failure policy (ToolHive's always-deny). A webhook that cannot be consulted
 * otherwise (no answer in time, an error status, a redirect, an address the policy refuses, an
 * answer that is not that JSON, a refused patch) fails the call under `failure_policy: fail`
 * (the default) and is skipped under `ignore`. Every decision is logged and audited by the
 * webhook's name.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../../log.js';
import { ProviderError } from '../../../net/providerUrl.js';
import { callWith, type Identity, type McpCall, type McpMiddleware } from '../chain.js';
import { ErrorCode, errorResponse, type JsonRpcResponse } from '../../core/jsonrpc.js';
import type { Auditor } from '../audit/audit.js';
import { PatchRefused, patchArguments } from './patch.js';
import type { WebhookClient } from './client.js';

const CALLS = new Set(['tools/call', 'prompts/get', 'resources/read']);
const MAX_REASON = 500;
/** The webhook API version ToolHive sends (pkg/webhook/types.go `APIVersion`). */
const API_VERSION = 'v0.1.0';
/** The one patch type ToolHive applies. */
const JSON_PATCH = 'json_patch';
/** The status by which a webhook denies whatever its failure policy. */
const ALWAYS_DENY = 422;

type Kind = 'mutating' | 'validating';

export interface WebhookOptions {
	readonly workload: string;
	/** The workload's transport, for the body's `context`. */
	readonly transport: string;
	readonly mutating: readonly WebhookClient[];
	readonly validating: readonly WebhookClient[];
	readonly log: Logger;
	readonly auditor?: Auditor;
}

/** ToolHive's `Response` and `MutatingResponse`, as far as Hangar reads them. */
interface Answer {
	readonly allowed: boolean;
	readonly reason?: unknown;
	readonly message?: unknown;
	readonly patch_type?: unknown;
	readonly patch?: unknown;
}

/** What one webhook makes of a call: the call as it goes on (patched or not), or the error it ends with. */
type Decision = { readonly call: McpCall } | { readonly refusal: JsonRpcResponse };

class WebhookFailure extends Error {}
class WebhookDenial extends Error {}

/** ToolHive's `PrincipalInfo` of the caller: claims, never the token; null when callers do not authenticate. */
function principalOf(identity: Identity | undefined): Record<string, unknown> | null {
	if (!identity) return null;
	const { claims } = identity;
	const text = (claim: string) => (typeof claims[claim] === 'string' ? { [claim]: claims[claim] } : {});
	return { sub: identity.subject, ...text('name'), ...text('email'), claims };
}

export function webhookMiddleware(options: WebhookOptions): McpMiddleware {
	const { workload, transport, log, auditor } = options;
	const what = (call: McpCall) => `${call.request.method}${typeof call.request.params?.name === 'string' ? ` ${call.request.params.name}` : ''}`;

	/** The webhook's answer; a WebhookDenial for its 422, a WebhookFailure saying why there is no answer. */
	const ask = async (webhook: WebhookClient, call: McpCall): Promise<Answer> => {
		const payload = {
			version: API_VERSION,
			uid: randomUUID(),
			timestamp: new Date().toISOString(),
			principal: principalOf(call.exchange.identity),
			mcp_request: call.request,
			context: { server_name: workload, source_ip: call.exchange.request.socket.remoteAddress ?? '', transport },
		};
		let answer: unknown;
		try {
			answer = await webhook.call(payload);
		} catch (error) {
			if (error instanceof ProviderError && error.status === ALWAYS_DENY) throw new WebhookDenial(`it answered ${ALWAYS_DENY}`);
			throw new WebhookFailure((error as Error).message);
		}
		if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw new WebhookFailure('its answer is not a JSON object');
		const { allowed } = answer as { allowed?: unknown };
		// As ToolHive reads it: absent is false, anything but a boolean is a malformed answer.
		if (allowed !== undefined && typeof allowed !== 'boolean') throw new WebhookFailure('its "allowed" is not a boolean');
		return { ...(answer as object), allowed: allowed === true };
	};

	const refuse = (call: McpCall, webhook: WebhookClient, message: string, outcome: 'denied' | 'failed'): Decision => {
		auditor?.callEvent(call, 'webhook_decision', outcome === 'denied' ? 'denied' : 'error', { webhook: webhook.name, decision: outcome });
		return { refusal: errorResponse(call.request.id, ErrorCode.GuardrailBlocked, message, { webhook: webhook.name }) };
	};

	/** Under `fail`, the call's error; under `ignore`, the call as it was (the webhook is skipped). */
	const unconsulted = (call: McpCall, webhook: WebhookClient, reason: string): Decision => {
		log.warn(`webhook ${webhook.name} could not be consulted about ${what(call)}: ${reason}; ${webhook.failurePolicy === 'fail' ? 'the call is refused' : 'skipped (failure_policy: ignore)'}`);
		if (webhook.failurePolicy === 'fail') return refuse(call, webhook, `Hangar could not consult webhook ${webhook.name} about ${what(call)}, so the call is refused (failure_policy: fail): ${reason}`, 'failed');
		auditor?.callEvent(call, 'webhook_decision', 'error', { webhook: webhook.name, decision: 'ignored' });
		return { call };
	};

	const denied = (call: McpCall, webhook: WebhookClient, reason: unknown): Decision => {
		const said = typeof reason === 'string' && reason ? `: ${reason.slice(0, MAX_REASON)}` : '';
		log.info(`webhook ${webhook.name} denied ${what(call)}`);
		return refuse(call, webhook, `webhook ${webhook.name} denied ${what(call)}${said}`, 'denied');
	};

	/** One webhook's say on the call, mutating or validating alike (a validating webhook's patch is not read). */
	const consult = async (webhook: WebhookClient, kind: Kind, call: McpCall): Promise<Decision> => {
		let answer: Answer;
		try {
			answer = await ask(webhook, call);
		} catch (error) {
			if (error instanceof WebhookDenial) return denied(call, webhook, error.message);
			if (error instanceof WebhookFailure) return unconsulted(call, webhook, error.message);
			throw error;
		}
		if (!answer.allowed) return denied(call, webhook, answer.reason ?? answer.message);
		// ToolHive applies a patch only when both its type and a non-empty patch are given.
		const empty = answer.patch === undefined || answer.patch === null || (Array.isArray(answer.patch) && !answer.patch.length);
		if (kind === 'validating' || !answer.patch_type || empty) return { call };
		try {
			if (answer.patch_type !== JSON_PATCH) throw new PatchRefused(`its patch_type ${JSON.stringify(answer.patch_type)} is not ${JSON_PATCH}`);
			const params = patchArguments(call.request.params ?? {}, answer.patch);
			const patched = callWith(call, { request: { ...call.request, params } });
			auditor?.callEvent(patched, 'webhook_decision', 'success', { webhook: webhook.name, decision: 'patched' });
			return { call: patched };
		} catch (error) {
			if (!(error instanceof PatchRefused)) throw error;
			return unconsulted(call, webhook, `its patch is refused: ${error.message}`);
		}
	};

	const order: ReadonlyArray<readonly [Kind, readonly WebhookClient[]]> = [
		['mutating', options.mutating],
		['validating', options.validating],
	];
	return async (call, next) => {
		if (!CALLS.has(call.request.method)) return next(call);
		let current = call;
		for (const [kind, webhooks] of order) {
			for (const webhook of webhooks) {
				const decision = await consult(webhook, kind, current);
				if ('refusal' in decision) return decision.refusal;
				current = decision.call;
			}
		}
		return next(current);
	};
}
