/**
 * The guardrails in the chain: what a client sends in `tools/call` and `prompts/get` arguments
 * and `resources/read` URIs (as requests, or as notifications in the notice chain), what the
 * server answers to them (result or error, whichever way the answer came: the backend hands
 * the chain one response), and what the server sends toward the client on its own: its
 * requests (`sampling/createMessage`, `elicitation/create`) and notifications (log messages,
 * progress), which every backend delivers through the client session's outbound filter. An
 * audit log that keeps request or response data writes the redacted copy of a message that
 * held a finding, whatever the action.
 *
 * Each guardrail (secrets, personal data) has its action per direction (runspec/guardrails.ts);
 * the texts of a message are collected once for all of them. Every finding is logged, audited
 * and counted by its rule, never with the text it matched.
 */
import type { GuardrailAction, SecretAllowRule } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';
import { callWith, type HttpExchange, type McpCall, type McpMiddleware, type NoticeMiddleware, type OutboundFilter } from '../chain.js';
import { ErrorCode, errorResponse, isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.js';
import { tag } from '../../core/tags.js';
import type { Auditor } from '../audit/audit.js';
import { collectTexts, rewriteTexts, type TextSlot } from './texts.js';
import type { Finding } from './scanner.js';

/** Toward the server (`request`) or toward the client (`response`: answers, and the server's own requests and notifications). */
export type Direction = 'request' | 'response';

/** Hears each finding acted on, and each message too large to scan whole (rule `oversized`). */
export type FindingListener = (rule: string, action: GuardrailAction, direction: Direction) => void;

/** One guardrail as the guard applies it: what finds its findings, its action per direction, its allow rules. */
export interface Guardrail {
	readonly name: 'secrets' | 'personal_data';
	readonly actions: Readonly<Record<Direction, GuardrailAction>>;
	readonly allow: readonly SecretAllowRule[];
	scan(slots: readonly TextSlot[]): Finding[];
}

/** The `_meta` key of a result whose binary parts were not scanned. */
const UNSCANNED_META = 'dev.hangar/guardrails';

/** The rule a message over the scan cap is reported under. */
const OVERSIZED_RULE = 'oversized';

/** The audit event of each guardrail's findings. */
const EVENT_TYPES: Readonly<Record<Guardrail['name'], string>> = { secrets: 'guardrail_secret', personal_data: 'guardrail_personal_data' };
const WHAT: Readonly<Record<Guardrail['name'], string>> = { secrets: 'a secret', personal_data: 'personal data' };

/** The part of each scanned client request that is the client's: its key in `params`. */
const SCANNED_PARAMS: ReadonlyMap<string, string> = new Map([
	['tools/call', 'arguments'],
	['prompts/get', 'arguments'],
	['resources/read', 'uri'],
]);

/** The parts of each scanned server message toward the client: its keys in `params`. */
const SCANNED_SERVER_PARAMS: ReadonlyMap<string, readonly string[]> = new Map([
	['sampling/createMessage', ['messages', 'systemPrompt']],
	['elicitation/create', ['message']],
	['notifications/message', ['data']],
	['notifications/progress', ['message']],
]);

export interface GuardOptions {
	readonly workload: string;
	readonly guardrails: readonly Guardrail[];
	readonly maxScanBytes: number;
	readonly oversized: 'pass' | 'block';
	readonly log: Logger;
	readonly auditor?: Auditor;
	readonly onFinding?: FindingListener;
}

export function redactionMarker(rule: string): string {
	return `[REDACTED:${rule}]`;
}

/** A finding after the allow rules, with the guardrail whose action applies to it. */
interface GuardedFinding extends Finding {
	readonly guardrail: Guardrail;
}

/** The message a scan is about: for the log, the audit event and the error. Without an exchange, the server sent it. */
interface Subject {
	readonly exchange?: HttpExchange;
	readonly session: McpCall['session'];
	readonly message: { readonly method: string; readonly params?: Record<string, unknown> };
	readonly id: RequestId | null;
}

/** What goes on after a scan: the value (redacted where told to), its fully redacted copy for the audit log when it held a finding, its unscanned binary parts. */
type Inspected = { readonly refusal: JsonRpcResponse; readonly clean: unknown } | { readonly value: unknown; readonly clean: unknown; readonly binary: number };

export class TrafficGuard {
	/** The guardrails that scan each direction. */
	private readonly active: Readonly<Record<Direction, readonly Guardrail[]>>;

	constructor(private readonly options: GuardOptions) {
		const scanning = (direction: Direction) => options.guardrails.filter((guardrail) => guardrail.actions[direction] !== 'off');
		this.active = { request: scanning('request'), response: scanning('response') };
	}

	readonly middleware: McpMiddleware = async (call, next) => {
		const field = SCANNED_PARAMS.get(call.request.method);
		if (!field) return next(call);
		const subject: Subject = { exchange: call.exchange, session: call.session, message: call.request, id: call.request.id };

		let forwarded = call;
		if (this.active.request.length) {
			const checked = this.checkRequest(subject, field, call.request);
			if ('refusal' in checked) return checked.refusal;
			if (checked.request !== call.request) forwarded = callWith(call, { request: checked.request });
		}

		const response = await next(forwarded);
		if (!this.active.response.length) return response;
		const answered = response.error ?? response.result;
		if (answered === undefined) return response;
		const inspected = this.inspect(subject, answered, 'response');
		if ('refusal' in inspected) return inspected.refusal;
		const { value, clean, binary } = inspected;
		if (clean === undefined && !binary) return response;
		const answer: JsonRpcResponse = response.error
			? { ...response, error: value as JsonRpcResponse['error'] }
			: { ...response, result: binary ? withUnscannedNote(value, binary) : (value as Record<string, unknown>) };
		if (clean !== undefined) this.options.auditor?.screen(answer, clean);
		return answer;
	};

	/** A request sent as a notification (no answer comes back): its arguments are checked all the same. */
	readonly notice: NoticeMiddleware = async (notice, next) => {
		const { message } = notice;
		const field = 'method' in message ? SCANNED_PARAMS.get(message.method) : undefined;
		if (!field || !('method' in message) || !this.active.request.length) return next(notice);
		const checked = this.checkRequest({ exchange: notice.exchange, session: notice.session, message, id: null }, field, message);
		if ('refusal' in checked) return tag(checked.refusal, { refusal: { status: 403 } });
		return next(checked.request === message ? notice : { message: checked.request, session: notice.session, exchange: notice.exchange });
	};

	/**
	 * The server's requests and notifications toward the client, under the answers' actions: a
	 * blocked request is answered to the server with the error naming the rules, a blocked
	 * notification dropped; a redacted one goes on redacted.
	 */
	readonly outbound: OutboundFilter = (message, session) => {
		if (!('method' in message) || !this.active.response.length) return message;
		const fields = SCANNED_SERVER_PARAMS.get(message.method);
		const params = message.params;
		if (!fields || !params) return message;
		const scanned: Record<string, unknown> = {};
		for (const field of fields) if (params[field] !== undefined) scanned[field] = params[field];
		const id = isRequest(message) ? message.id : null;
		const inspected = this.inspect({ session, message, id }, scanned, 'response');
		if ('refusal' in inspected) {
			if (id !== null) void Promise.resolve(session.backend.send(inspected.refusal)).catch(() => undefined);
			return undefined;
		}
		return inspected.value === scanned ? message : ({ ...message, params: { ...params, ...(inspected.value as Record<string, unknown>) } } as JsonRpcMessage);
	};

	/** The request as it goes on (redacted when told to), or the error it ends with. */
	private checkRequest<Message extends JsonRpcRequest | JsonRpcNotification>(subject: Subject, field: string, request: Message): { request: Message } | { refusal: JsonRpcResponse } {
		const sent = request.params?.[field];
		if (sent === undefined) return { request };
		const inspected = this.inspect(subject, sent, 'request');
		if (inspected.clean !== undefined) this.options.auditor?.screen(request, { ...request.params, [field]: inspected.clean });
		if ('refusal' in inspected) return { refusal: inspected.refusal };
		if (inspected.value === sent) return { request };
		return { request: { ...request, params: { ...request.params, [field]: inspected.value } } };
	}

	/** Scans `value` with the guardrails of `direction`, reports what they found, and acts on it. */
	private inspect(subject: Subject, value: unknown, direction: Direction): Inspected {
		const { maxScanBytes, oversized } = this.options;
		const { slots, binary, truncated } = collectTexts(value, maxScanBytes);
		const tool = typeof subject.message.params?.name === 'string' ? subject.message.params.name : undefined;
		const findings: GuardedFinding[] = [];
		for (const guardrail of this.active[direction]) {
			for (const finding of guardrail.scan(slots)) if (!allowed(guardrail, finding, slots, tool)) findings.push({ ...finding, guardrail });
		}
		// The common case, nothing found, costs no more than the scan.
		if (!findings.length && !truncated) return { value, clean: undefined, binary };
		const where = whereOf(subject, direction);
		if (truncated) this.oversized(subject, direction, where);
		const blocked = new Set<string>();
		for (const guardrail of this.active[direction]) {
			const rules = [...new Set(findings.filter((finding) => finding.guardrail === guardrail).map((finding) => finding.rule))];
			if (!rules.length) continue;
			const action = guardrail.actions[direction];
			this.report(subject, guardrail, rules, direction, action, where);
			if (action === 'block') for (const rule of rules) blocked.add(rule);
		}
		const clean = findings.length ? redacted(value, slots, findings) : undefined;
		if (blocked.size) {
			const message = `Hangar's guardrails blocked ${where}: it holds a secret (${[...blocked].map((rule) => `rule ${rule}`).join(', ')})`;
			return { refusal: errorResponse(subject.id, ErrorCode.GuardrailBlocked, message, { guardrail: 'secrets', direction, rules: [...blocked] }), clean };
		}
		if (truncated && oversized === 'block') {
			const message = `Hangar's guardrails blocked ${where}: it holds more than the ${maxScanBytes} characters of text they scan (oversized: block)`;
			return { refusal: errorResponse(subject.id, ErrorCode.GuardrailBlocked, message, { guardrail: this.active[direction][0]!.name, direction, rules: [OVERSIZED_RULE] }), clean };
		}
		if (clean === undefined) return { value, clean, binary };
		const redacting = findings.filter((finding) => finding.guardrail.actions[direction] === 'redact');
		const forwarded = redacting.length === findings.length ? clean : redacting.length ? redacted(value, slots, redacting) : value;
		return { value: forwarded, clean, binary };
	}

	private report(subject: Subject, guardrail: Guardrail, rules: string[], direction: Direction, action: GuardrailAction, where: string): void {
		const { log, onFinding, workload } = this.options;
		const done = action === 'block' ? 'blocked' : action === 'redact' ? 'redacted' : 'let through (audit)';
		log.warn(`guardrails: ${WHAT[guardrail.name]} in ${where} of ${workload}, ${done}: ${rules.map((rule) => `rule ${rule}`).join(', ')}`);
		this.audit(subject, EVENT_TYPES[guardrail.name], action === 'block' ? 'denied' : 'success', { guardrail: guardrail.name, direction, action, rules });
		for (const rule of rules) onFinding?.(rule, action, direction);
	}

	private oversized(subject: Subject, direction: Direction, where: string): void {
		const { log, onFinding, maxScanBytes } = this.options;
		const action = this.options.oversized === 'block' ? 'block' : 'audit';
		log.warn(`guardrails: ${where} holds more than ${maxScanBytes} characters of text; ${action === 'block' ? 'blocked' : 'the rest was not scanned'}`);
		this.audit(subject, 'guardrail_oversized', action === 'block' ? 'denied' : 'success', { guardrail: this.active[direction][0]!.name, direction, action, max_scan_bytes: maxScanBytes });
		onFinding?.(OVERSIZED_RULE, action, direction);
	}

	private audit(subject: Subject, type: string, outcome: 'denied' | 'success', extra: Record<string, unknown>): void {
		const { auditor } = this.options;
		if (subject.exchange) auditor?.messageEvent(subject.exchange, subject.session, subject.message, type, outcome, extra);
		else auditor?.serverEvent(subject.session, subject.message, type, outcome, extra);
	}
}

function allowed(guardrail: Guardrail, finding: Finding, slots: readonly TextSlot[], tool: string | undefined): boolean {
	if (!guardrail.allow.length) return false;
	const matched = finding.ranges.map(({ slot, start, end }) => slots[slot]!.text.slice(start, end)).join('');
	return guardrail.allow.some(
		(allow) => (allow.rule === undefined || allow.rule === finding.rule) && (allow.match === undefined || allow.match === matched) && (allow.tool === undefined || allow.tool === tool),
	);
}

/** `the request of tools/call echo`, `the answer to …`, `the server's sampling/createMessage`. */
function whereOf(subject: Subject, direction: Direction): string {
	const { method, params } = subject.message;
	if (!subject.exchange && direction === 'response') return `the server's ${method}`;
	return `${direction === 'request' ? 'the request of' : 'the answer to'} ${method}${typeof params?.name === 'string' ? ` ${params.name}` : ''}`;
}

/** `value` with each finding's ranges replaced by the marker of its rule. */
function redacted(value: unknown, slots: readonly TextSlot[], findings: readonly Finding[]): unknown {
	const bySlot = new Map<number, Array<{ start: number; end: number; rule: string }>>();
	for (const finding of findings) {
		for (const { slot, start, end } of finding.ranges) {
			const ranges = bySlot.get(slot) ?? [];
			ranges.push({ start, end, rule: finding.rule });
			bySlot.set(slot, ranges);
		}
	}
	const rewrites: Array<readonly [TextSlot, string]> = [];
	for (const [index, ranges] of bySlot) {
		const slot = slots[index]!;
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
