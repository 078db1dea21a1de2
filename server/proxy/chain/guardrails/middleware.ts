/**
 * Secret scanning in the chain: what a client sends in `tools/call` and `prompts/get` arguments
 * and `resources/read` URIs (as requests, or as notifications in the notice chain), and what the
 * server answers to them (result or error), whichever way the answer came (JSON or an event
 * stream: the backend hands the chain one response). An audit log that keeps request or
 * response data writes the redacted copy of a message that held a secret, whatever the action.
 * Each direction has its action (runspec/guardrails.ts); every finding is logged, audited and
 * counted by its rule, never with the text it matched.
 */
import type { GuardrailAction } from '../../../../protocol/runConfig.js';
import type { SecretScanSettings } from '../../../runspec/guardrails.js';
import type { Logger } from '../../../log.js';
import { callWith, type HttpExchange, type McpCall, type McpMiddleware, type NoticeMiddleware } from '../chain.js';
import { ErrorCode, errorResponse, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.js';
import { tag } from '../../core/tags.js';
import type { Auditor } from '../audit/audit.js';
import { collectTexts, rewriteTexts, type TextSlot } from './texts.js';
import type { Finding, SecretScanner } from './scanner.js';

export type Direction = 'request' | 'response';

/** Hears each finding acted on, and each message too large to scan whole (rule `oversized`). */
export type FindingListener = (rule: string, action: GuardrailAction, direction: Direction) => void;

/** The `_meta` key of a result whose binary parts were not scanned. */
const UNSCANNED_META = 'dev.hangar/guardrails';

/** The rule a message over the scan cap is reported under. */
const OVERSIZED_RULE = 'oversized';

/** The part of each scanned request that is the client's: its key in `params`. */
const SCANNED_PARAMS: ReadonlyMap<string, string> = new Map([
	['tools/call', 'arguments'],
	['prompts/get', 'arguments'],
	['resources/read', 'uri'],
]);

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

/** The client message a scan is about: for the log, the audit event and the error. */
interface Subject {
	readonly exchange: HttpExchange;
	readonly session: McpCall['session'];
	readonly message: { readonly method: string; readonly params?: Record<string, unknown> };
	readonly id: RequestId | null;
}

export class SecretGuard {
	constructor(private readonly options: SecretGuardOptions) {}

	readonly middleware: McpMiddleware = async (call, next) => {
		const field = SCANNED_PARAMS.get(call.request.method);
		if (!field) return next(call);
		const subject: Subject = { exchange: call.exchange, session: call.session, message: call.request, id: call.request.id };
		const { requests, responses } = this.options.settings;

		let forwarded = call;
		if (requests !== 'off') {
			const checked = this.checkRequest(subject, field, call.request);
			if ('refusal' in checked) return checked.refusal;
			if (checked.request !== call.request) forwarded = callWith(call, { request: checked.request });
		}

		const response = await next(forwarded);
		if (responses === 'off') return response;
		const answered = response.error ?? response.result;
		if (answered === undefined) return response;
		const scan = this.scan(answered, subject);
		const refusal = this.refusal(subject, scan, 'response', responses);
		if (refusal) return refusal;
		if (!scan.findings.length && !scan.binary) return response;
		const clean = scan.findings.length ? redacted(answered, scan) : answered;
		const changed = responses === 'redact' ? clean : answered;
		const answer: JsonRpcResponse = response.error
			? { ...response, error: changed as JsonRpcResponse['error'] }
			: { ...response, result: scan.binary ? withUnscannedNote(changed, scan.binary) : (changed as Record<string, unknown>) };
		if (scan.findings.length) this.options.auditor?.screen(answer, clean);
		return answer;
	};

	/** A request sent as a notification (no answer comes back): its arguments are checked all the same. */
	readonly notice: NoticeMiddleware = async (notice, next) => {
		const { message } = notice;
		const field = 'method' in message ? SCANNED_PARAMS.get(message.method) : undefined;
		if (!field || !('method' in message) || this.options.settings.requests === 'off') return next(notice);
		const checked = this.checkRequest({ exchange: notice.exchange, session: notice.session, message, id: null }, field, message);
		if ('refusal' in checked) return tag(checked.refusal, { refusal: { status: 403 } });
		return next(checked.request === message ? notice : { message: checked.request, session: notice.session, exchange: notice.exchange });
	};

	/** The request as it goes on (redacted when told to), or the error it ends with. */
	private checkRequest<Message extends JsonRpcRequest | JsonRpcNotification>(subject: Subject, field: string, request: Message): { request: Message } | { refusal: JsonRpcResponse } {
		const sent = request.params?.[field];
		if (sent === undefined) return { request };
		const scan = this.scan(sent, subject);
		const action = this.options.settings.requests;
		const clean = scan.findings.length ? { ...request.params, [field]: redacted(sent, scan) } : undefined;
		if (clean) this.options.auditor?.screen(request, clean);
		const refusal = this.refusal(subject, scan, 'request', action);
		if (refusal) return { refusal };
		if (action !== 'redact' || !clean) return { request };
		return { request: { ...request, params: clean } };
	}

	private scan(value: unknown, subject: Subject): Scan {
		const { slots, binary, truncated } = collectTexts(value, this.options.settings.maxScanBytes);
		const tool = typeof subject.message.params?.name === 'string' ? subject.message.params.name : undefined;
		const findings = this.options.scanner.scan(slots).filter((finding) => !this.allowed(finding, slots, tool));
		return { slots, findings, binary, truncated };
	}

	private allowed(finding: Finding, slots: readonly TextSlot[], tool: string | undefined): boolean {
		const matched = finding.ranges.map(({ slot, start, end }) => slots[slot]!.text.slice(start, end)).join('');
		return this.options.settings.allow.some(
			(allow) => (allow.rule === undefined || allow.rule === finding.rule) && (allow.match === undefined || allow.match === matched) && (allow.tool === undefined || allow.tool === tool),
		);
	}

	/** Reports what `scan` found; the error the message ends with when the action blocks it. */
	private refusal(subject: Subject, scan: Scan, direction: Direction, action: GuardrailAction): JsonRpcResponse | undefined {
		const rules = [...new Set(scan.findings.map((finding) => finding.rule))];
		const { method, params } = subject.message;
		const where = `${direction === 'request' ? 'the request of' : 'the answer to'} ${method}${typeof params?.name === 'string' ? ` ${params.name}` : ''}`;
		if (scan.truncated) this.oversized(subject, direction, where);
		if (rules.length) this.report(subject, rules, direction, action, where);
		if (action === 'block' && rules.length) {
			const message = `Hangar's guardrails blocked ${where}: it holds a secret (${rules.map((rule) => `rule ${rule}`).join(', ')})`;
			return errorResponse(subject.id, ErrorCode.GuardrailBlocked, message, { guardrail: 'secrets', direction, rules });
		}
		if (scan.truncated && this.options.settings.oversized === 'block') {
			const message = `Hangar's guardrails blocked ${where}: it holds more than the ${this.options.settings.maxScanBytes} characters of text they scan (oversized: block)`;
			return errorResponse(subject.id, ErrorCode.GuardrailBlocked, message, { guardrail: 'secrets', direction, rules: [OVERSIZED_RULE] });
		}
		return undefined;
	}

	private report(subject: Subject, rules: string[], direction: Direction, action: GuardrailAction, where: string): void {
		const { log, auditor, onFinding, workload } = this.options;
		const done = action === 'block' ? 'blocked' : action === 'redact' ? 'redacted' : 'let through (audit)';
		log.warn(`guardrails: a secret in ${where} of ${workload}, ${done}: ${rules.map((rule) => `rule ${rule}`).join(', ')}`);
		auditor?.messageEvent(subject.exchange, subject.session, subject.message, 'guardrail_secret', action === 'block' ? 'denied' : 'success', { guardrail: 'secrets', direction, action, rules });
		for (const rule of rules) onFinding?.(rule, action, direction);
	}

	private oversized(subject: Subject, direction: Direction, where: string): void {
		const { log, auditor, onFinding, settings } = this.options;
		const action = settings.oversized === 'block' ? 'block' : 'audit';
		log.warn(`guardrails: ${where} holds more than ${settings.maxScanBytes} characters of text; ${action === 'block' ? 'blocked' : 'the rest was not scanned'}`);
		auditor?.messageEvent(subject.exchange, subject.session, subject.message, 'guardrail_oversized', action === 'block' ? 'denied' : 'success', { guardrail: 'secrets', direction, action, max_scan_bytes: settings.maxScanBytes });
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
