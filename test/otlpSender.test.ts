/**
 * The proxy's OTLP sender (server/proxy/chain/telemetry/otlpSender.ts): encoded requests go from its
 * worker thread (the build's, dist/) by the official transport to a real OTLP/HTTP receiver on
 * loopback; each request's result comes back; a body moves to the thread instead of being
 * copied; shutting down sends what is under way first; a thread that cannot start fails every
 * request at once and says so once.
 */
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../server/log.js';
import { OtlpSender, type OtlpRequest, type OtlpSignal } from '../server/proxy/chain/telemetry/otlpSender.js';
import { encodeSpanRequest, SpanBatch } from '../server/proxy/chain/telemetry/otlpSpans.js';
import { OtlpReceiver } from './fixtures/telemetry/receivers.js';

/** The thread's module is the build's (a test run builds first, as the README's test command does). */
const WORKER = new URL('../dist/server/proxy/chain/telemetry/otlpSenderWorker.js', import.meta.url);

let receiver: OtlpReceiver;
beforeAll(async () => {
	receiver = await OtlpReceiver.start();
});
afterAll(() => receiver?.stop());

function recordingLog(): Logger & { warnings: string[] } {
	const warnings: string[] = [];
	return { warnings, debug: () => undefined, info: () => undefined, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) };
}

function spanRequest(traceId: string): OtlpRequest {
	const batch = new SpanBatch();
	const now = performance.now();
	batch.add({
		context: { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED },
		parent: undefined,
		name: 'tools/call echo',
		kind: SpanKind.SERVER,
		startedAt: now,
		endedAt: now + 1,
		attributes: { 'mcp.method.name': 'tools/call' },
		status: { code: SpanStatusCode.UNSET },
	});
	return { body: encodeSpanRequest({ 'service.name': 'sender-test' }, 'hangar-proxy', batch.take()), count: 1 };
}

function metricsRequest(workload: string): OtlpRequest {
	const body = JSON.stringify({
		resourceMetrics: [{ resource: { attributes: [{ key: 'hangar.workload', value: { stringValue: workload } }] }, scopeMetrics: [{ scope: { name: 'hangar-proxy' }, metrics: [{ name: 'sender.test.metric' }] }] }],
	});
	return { body: new TextEncoder().encode(body), count: 1 };
}

const sent = (sender: OtlpSender, signal: OtlpSignal, request: OtlpRequest) => new Promise<ExportResult>((resolve) => sender.send(signal, request, resolve));

describe('the OTLP sender', { timeout: 60_000 }, () => {
	const endpoints = () => ({ traces: { url: `${receiver.url}/v1/traces`, headers: {} }, metrics: { url: `${receiver.url}/v1/metrics`, headers: {} } });

	it('sends encoded spans and metrics from its thread, and tells how each went', async () => {
		const log = recordingLog();
		const sender = new OtlpSender(endpoints(), log, WORKER);
		try {
			const traceId = 'e'.repeat(32);
			expect(await sent(sender, 'traces', spanRequest(traceId))).toEqual({ code: ExportResultCode.SUCCESS, error: undefined });
			expect(receiver.spans.filter((span) => span.traceId === traceId).map((span) => span.name)).toEqual(['tools/call echo']);
			expect((await sent(sender, 'metrics', metricsRequest('sent-directly'))).code).toBe(ExportResultCode.SUCCESS);
			expect(receiver.metricWorkloads).toContain('sent-directly');
		} finally {
			await sender.shutdown();
		}
		expect(log.warnings).toEqual([]);
	});

	it('moves a body to its thread, and fails a body that is no longer there without stopping', async () => {
		const sender = new OtlpSender(endpoints(), recordingLog(), WORKER);
		try {
			const request = spanRequest('a'.repeat(32));
			const first = sent(sender, 'traces', request);
			// Moved, not copied: the proxy's side of the memory is gone.
			expect(request.body.byteLength).toBe(0);
			expect((await first).code).toBe(ExportResultCode.SUCCESS);
			const again = await sent(sender, 'traces', request);
			expect(again.code).toBe(ExportResultCode.FAILED);
			expect(again.error?.message).toMatch(/no body/);
			expect((await sent(sender, 'traces', spanRequest('b'.repeat(32)))).code).toBe(ExportResultCode.SUCCESS);
		} finally {
			await sender.shutdown();
		}
	});

	it('sends what is under way before its thread ends', async () => {
		const sender = new OtlpSender(endpoints(), recordingLog(), WORKER);
		const traceId = 'f'.repeat(32);
		const result = sent(sender, 'traces', spanRequest(traceId));
		await sender.shutdown();
		expect((await result).code).toBe(ExportResultCode.SUCCESS);
		expect(receiver.spans.some((span) => span.traceId === traceId)).toBe(true);
	});

	it('fails every request at once when its thread cannot start, and says so once', async () => {
		const log = recordingLog();
		const sender = new OtlpSender({ traces: { url: 'http://[not-an-address', headers: {} } }, log, WORKER);
		try {
			const first = await sent(sender, 'traces', spanRequest('1'.repeat(32)));
			expect(first.code).toBe(ExportResultCode.FAILED);
			expect(first.error?.message).toMatch(/export URL/);
			expect((await sent(sender, 'traces', spanRequest('2'.repeat(32)))).code).toBe(ExportResultCode.FAILED);
		} finally {
			await sender.shutdown();
		}
		expect(log.warnings).toEqual([expect.stringMatching(/^telemetry is no longer sent: .*export URL/)]);
	});
});

