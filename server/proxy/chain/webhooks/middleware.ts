/**
 * ToolHive's webhooks in the chain, for each `tools/call`, `prompts/get` and `resources/read`:
 * the mutating ones in order (each may answer a JSON Patch on the call's arguments, patch.ts),
 * then the validating ones (each answers allowed, or denied with a reason the client is shown).
 * A webhook that cannot be consulted (no answer in time, an error status, a redirect, an address
 * the policy refuses, an answer that is not the expected JSON) fails the call under
 * `failure_policy: fail` (the default) and is skipped under `ignore`. Every decision is logged
 * and audited by the webhook's name.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../../log.js';
import { callWith, type McpCall, type McpMiddleware } from '../chain.js';
import { ErrorCode, errorResponse, type JsonRpcResponse } from '../../core/jsonrpc.js';
import type { Auditor } from '../audit/audit.js';
import { PatchRefused, patchArguments } from './patch.js';
import type { WebhookClient } from './client.js';

const CALLS = new Set(['tools/call', 'prompts/get', 'resources/read']);
const MAX_REASON = 500;

export interface WebhookOptions {
	readonly workload: string;
	readonly mutating: readonly WebhookClient[];
	readonly validating: readonly WebhookClient[];
	readonly log: Logger;
	readonly auditor?: Auditor;
}

interface Answer {
	readonly allowed?: unknown;
	readonly reason?: unknown;
	readonly patch?: unknown;
}

class WebhookFailure extends Error {}

export function webhookMiddleware(options: WebhookOptions): McpMiddleware {
	const { workload, log, auditor } = options;
	const what = (call: McpCall) => `${call.request.method}${typeof call.request.params?.name === 'string' ? ` ${call.request.params.name}` : ''}`;

	/** The webhook's answer, or a WebhookFailure saying why there is none. */
	const ask = async (webhook: WebhookClient, kind: 'mutating' | 'validating', call: McpCall): Promise<Answer> => {
		const payload = {
			version: 'v1',
			uid: randomUUID(),
			timestamp: new Date().toISOString(),
			kind,
			workload,
			principal: call.exchange.identity ? { subject: call.exchange.identity.subject } : undefined,
			request: { method: call.request.method, params: call.request.params ?? {} },
		};
		let answer: unknown;
		try {
			answer = await webhook.call(payload);
		} catch (error) {
			throw new WebhookFailure((error as Error).message);
		}
		if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw new WebhookFailure('its answer is not a JSON object');
		const { allowed } = answer as Answer;
		if (kind === 'validating' && typeof allowed !== 'boolean') throw new WebhookFailure('its answer has no boolean "allowed"');
		if (allowed !== undefined && typeof allowed !== 'boolean') throw new WebhookFailure('its "allowed" is not a boolean');
		return answer as Answer;
	};

	const refuse = (call: McpCall, webhook: WebhookClient, message: string, outcome: 'denied' | 'failed'): JsonRpcResponse => {
		auditor?.callEvent(call, 'webhook_decision', outcome === 'denied' ? 'denied' : 'error', { webhook: webhook.name, decision: outcome });
		return errorResponse(call.request.id, ErrorCode.GuardrailBlocked, message, { webhook: webhook.name });
	};

	/** Under `fail`, the call's error; under `ignore`, undefined (the webhook is skipped). */
	const failed = (call: McpCall, webhook: WebhookClient, reason: string): JsonRpcResponse | undefined => {
		log.warn(`webhook ${webhook.name} could not be consulted about ${what(call)}: ${reason}; ${webhook.failurePolicy === 'fail' ? 'the call is refused' : 'skipped (failure_policy: ignore)'}`);
		if (webhook.failurePolicy === 'fail') return refuse(call, webhook, `Hangar could not consult webhook ${webhook.name} about ${what(call)}, so the call is refused (failure_policy: fail): ${reason}`, 'failed');
		auditor?.callEvent(call, 'webhook_decision', 'error', { webhook: webhook.name, decision: 'ignored' });
		return undefined;
	};

	const denied = (call: McpCall, webhook: WebhookClient, reason: unknown): JsonRpcResponse => {
		const said = typeof reason === 'string' && reason ? `: ${reason.slice(0, MAX_REASON)}` : '';
		log.info(`webhook ${webhook.name} denied ${what(call)}`);
		return refuse(call, webhook, `webhook ${webhook.name} denied ${what(call)}${said}`, 'denied');
	};

	return async (call, next) => {
		if (!CALLS.has(call.request.method)) return next(call);
		let current = call;
		for (const webhook of options.mutating) {
			let answer: Answer;
			try {
				answer = await ask(webhook, 'mutating', current);
			} catch (error) {
				const refusal = failed(current, webhook, (error as Error).message);
				if (refusal) return refusal;
				continue;
			}
			if (answer.allowed === false) return denied(current, webhook, answer.reason);
			if (answer.patch === undefined) continue;
			try {
				const params = patchArguments(current.request.params ?? {}, answer.patch);
				current = callWith(current, { request: { ...current.request, params } });
				auditor?.callEvent(current, 'webhook_decision', 'success', { webhook: webhook.name, decision: 'patched' });
			} catch (error) {
				if (!(error instanceof PatchRefused)) throw error;
				const refusal = failed(current, webhook, `its patch is refused: ${error.message}`);
				if (refusal) return refusal;
			}
		}
		for (const webhook of options.validating) {
			let answer: Answer;
			try {
				answer = await ask(webhook, 'validating', current);
			} catch (error) {
				const refusal = failed(current, webhook, (error as Error).message);
				if (refusal) return refusal;
				continue;
			}
			if (answer.allowed === false) return denied(current, webhook, answer.reason);
		}
		return next(current);
	};
}
