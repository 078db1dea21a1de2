/**
 * Secret scanning in the chain: what a client sends in `tools/call` and `prompts/get` arguments
 * and `resources/read` URIs, and what the server answers to them (result or error), whichever
 * way the answer came (JSON or an event stream: the backend hands the chain one response).
 * Each direction has its action (runspec/guardrails.ts); every finding is logged, audited and
 * counted by its rule, never with the text it matched.
 */
import type { GuardrailAction } from '../../../../protocol/runConfig.js';
import type { SecretScanSettings } from '../../../runspec/guardrails.js';
import type { Logger } from '../../../log.js';
import { callWith, type McpCall, type McpMiddleware } from '../chain.js';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../core/jsonrpc.js';
import type { Auditor } from '../audit/audit.js';
import { collectTexts, rewriteTexts, type TextSlot } from './texts.js';
import type { Finding, SecretScanner } from './scanner.js';

export type Direction = 'request' | 'response';

/** Hears each finding acted on, and each message too large to scan whole (rule `oversized`). */
export type FindingListener = (rule: string, action: GuardrailAction, direction: Direction) => void;

/** The `_meta` key of a result whose binary parts were not scanned. */
export const UNSCANNED_META = 'dev.hangar/guardrails';

/** The rule a message over the scan cap is reported under. */
export const OVERSIZED_RULE = 'oversized';

/** The part of each scanned request that is the client's: its key in `params`. */
const SCANNED_PARAMS: Readonly<Record<string, string>> = {
	'tools/call': 'arguments',
	'prompts/get': 'arguments',
	'resources/read': 'uri',
};

export interface SecretGuardOptions {
	readonly workload: string;
	readonly settings: SecretScanSettings;
	readonly scanner: SecretScanner;
	readonly log: Logger;
	readonly auditor?: Auditor;
	readonly onFinding?: FindingListener;
}

export function redactionMarker(rule: string): string {
	return `[REDACTED:${rule}]`;
}

/** What one scan found, after the allow rules, and whether the message was too large to scan whole. */
interface Scan {
	readonly slots: TextSlot[];
	readonly findings: Finding[];
	readonly binary: number;
	readonly truncated: boolean;
}

export class SecretGuard {
	constructor(private readonly options: SecretGuardOptions) {}

	readonly middleware: McpMiddleware = async (call, next) => {
		const field = SCANNED_PARAMS[call.request.method];
		if (!field) return next(call);
		const { requests, responses } = this.options.settings;
		const tool = typeof call.request.params?.name === 'string' ? call.request.params.name : undefined;

		let forwarded = call;
		const sent = call.request.params?.[field];
		if (requests !== 'off' && sent !== undefined) {
			const scan = this.scan(sent, tool);
			const refusal = this.refusal(call, scan, 'request', requests);
			if (refusal) return refusal;
			if (requests === 'redact' && scan.findings.length) {
				const request: JsonRpcRequest = { ...call.request, params: { ...call.request.params, [field]: redacted(sent, scan) } };
				forwarded = callWith(call, { request });
			}
		}

		const response = await next(forwarded);
		if (responses === 'off') return response;
		const answered = response.error ?? response.result;
		if (answered === undefined) return response;
		const scan = this.scan(answered, tool);
		const refusal = this.refusal(call, scan, 'response', responses);
		if (refusal) return refusal;
		if (!scan.findings.length && !scan.binary) return response;
		const changed = responses === 'redact' && scan.findings.length ? redacted(answered, scan) : answered;
		if (response.error) return { ...response, error: changed as JsonRpcResponse['error'] };
		return { ...response, result: scan.binary ? withUnscannedNote(changed, scan.binary) : (changed as Record<string, unknown>) };
	};

	private scan(value: unknown, tool: string | undefined): Scan {
		const { slots, binary, truncated } = collectTexts(value, this.options.settings.maxScanBytes);
		const findings = this.options.scanner.scan(slots).filter((finding) => !this.allowed(finding, slots, tool));
		return { slots, findings, binary, truncated };
	}

	private allowed(finding: Finding, slots: readonly TextSlot[], tool: string | undefined): boolean {
		const matched = finding.ranges.map(({ slot, start, end }) => slots[slot]!.text.slice(start, end)).join('');
		return this.options.settings.allow.some(
			(allow) => (allow.rule === undefined || allow.rule === finding.rule) && (allow.match === undefined || allow.match === matched) && (allow.tool === undefined || allow.tool === tool),
		);
	}

	/** Reports what `scan` found; the error the call ends with when the action blocks it. */
	private refusal(call: McpCall, scan: Scan, direction: Direction, action: GuardrailAction): JsonRpcResponse | undefined {
		const rules = [...new Set(scan.findings.map((finding) => finding.rule))];
		const where = `${direction === 'request' ? 'the request of' : 'the answer to'} ${call.request.method}${typeof call.request.params?.name === 'string' ? ` ${call.request.params.name}` : ''}`;
		if (scan.truncated) this.oversized(call, direction, where);
		if (rules.length) this.report(call, rules, direction, action, where);
		if (action === 'block' && rules.length) {
			const message = `Hangar's guardrails blocked ${where}: it holds a secret (${rules.map((rule) => `rule ${rule}`).join(', ')})`;
			return errorResponse(call.request.id, ErrorCode.GuardrailBlocked, message, { guardrail: 'secrets', direction, rules });
		}
		if (scan.truncated && this.options.settings.oversized === 'block') {
			const message = `Hangar's guardrails blocked ${where}: it holds more than the ${this.options.settings.maxScanBytes} characters of text they scan (oversized: block)`;
			return errorResponse(call.request.id, ErrorCode.GuardrailBlocked, message, { guardrail: 'secrets', direction, rules: [OVERSIZED_RULE] });
		}
		return undefined;
	}

	private report(call: McpCall, rules: string[], direction: Direction, action: GuardrailAction, where: string): void {
		const { log, auditor, onFinding, workload } = this.options;
		const done = action === 'block' ? 'blocked' : action === 'redact' ? 'redacted' : 'let through (audit)';
		log.warn(`guardrails: a secret in ${where} of ${workload}, ${done}: ${rules.map((rule) => `rule ${rule}`).join(', ')}`);
		auditor?.callEvent(call, 'guardrail_secret', action === 'block' ? 'denied' : 'success', { guardrail: 'secrets', direction, action, rules });
		for (const rule of rules) onFinding?.(rule, action, direction);
	}

	private oversized(call: McpCall, direction: Direction, where: string): void {
		const { log, auditor, onFinding, settings } = this.options;
		const action = settings.oversized === 'block' ? 'block' : 'audit';
		log.warn(`guardrails: ${where} holds more than ${settings.maxScanBytes} characters of text; ${action === 'block' ? 'blocked' : 'the rest was not scanned'}`);
		auditor?.callEvent(call, 'guardrail_oversized', action === 'block' ? 'denied' : 'success', { guardrail: 'secrets', direction, action, max_scan_bytes: settings.maxScanBytes });
		onFinding?.(OVERSIZED_RULE, action, direction);
	}
}

/** `value` with each finding's ranges replaced by the marker of its rule. */
function redacted(value: unknown, scan: Scan): unknown {
	const bySlot = new Map<number, Array<{ start: number; end: number; rule: string }>>();
	for (const finding of scan.findings) {
		for (const { slot, start, end } of finding.ranges) {
			const ranges = bySlot.get(slot) ?? [];
			ranges.push({ start, end, rule: finding.rule });
			bySlot.set(slot, ranges);
		}
	}
	const rewrites: Array<readonly [TextSlot, string]> = [];
	for (const [index, ranges] of bySlot) {
		const slot = scan.slots[index]!;
		// Overlapping ranges become one, named by the first rule.
		ranges.sort((a, b) => a.start - b.start || b.end - a.end);
		const merged: typeof ranges = [];
		for (const range of ranges) {
			const last = merged[merged.length - 1];
			if (last && range.start < last.end) last.end = Math.max(last.end, range.end);
			else merged.push({ ...range });
		}
		let text = slot.text;
		for (const range of merged.reverse()) text = text.slice(0, range.start) + redactionMarker(range.rule) + text.slice(range.end);
		rewrites.push([slot, text]);
	}
	return rewriteTexts(value, rewrites);
}

/** A result saying, in its `_meta`, how many binary parts the guardrails did not scan. */
function withUnscannedNote(result: unknown, binary: number): Record<string, unknown> {
	const record = result as Record<string, unknown>;
	const meta = (record._meta ?? {}) as Record<string, unknown>;
	return { ...record, _meta: { ...meta, [UNSCANNED_META]: { unscanned_binary_parts: binary } } };
}
