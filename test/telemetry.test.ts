/**
 * OpenTelemetry from a workload's proxy, with real parts: spans and metrics reach an OTLP/HTTP
 * receiver on loopback, a client's traceparent is the parent of the proxy's span and reaches
 * the HTTP server as the upstream span's, a real Prometheus server scrapes `/metrics`, the
 * --otel-* flags and the global default fill `telemetry_config`, and a proxy without telemetry
 * loads none of OpenTelemetry.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateWorkload, ExportWorkload, GetWorkload, GetWorkloadStats, ListWorkloads, type WorkloadStats } from '../protocol/protocol.workloads.js';
import { CallStats } from '../server/proxy/chain/telemetry/callStats.js';
import { MAX_LABEL_LENGTH, ProxyMetrics } from '../server/proxy/chain/telemetry/proxyMetrics.js';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { createWorkload, deleteAllWorkloads, openSession, postMcp, type Workload } from './fixtures/security/support.js';
import { OtlpReceiver, PrometheusServer, type OtlpSpan } from './fixtures/telemetry/receivers.js';
import { startFixture, waitFor, type RemoteServer } from './fixtures/workloads/helpers.js';
import { createTestHome, type TestHome } from './support/home.js';
import { HANGAR_BIN, runHangar, spawnDaemon, startServe, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';

const MODULE_HOOK = fileURLToPath(new URL('./fixtures/telemetry/record-modules.mjs', import.meta.url));
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

let home: TestHome;
let serve: ServeProcess;
let receiver: OtlpReceiver;
let upstream: RemoteServer;
let prometheus: PrometheusServer | undefined;
let moduleLog: string;


async function proxyPid(name: string): Promise<number> {
	const record = JSON.parse(await readFile(join(home.path, 'data', 'proxies', `${name}.json`), 'utf8')) as { pid: number };
	return record.pid;
}

beforeAll(async () => {
	home = await createTestHome();
	moduleLog = join(home.path, 'modules.log');
	await writeFile(moduleLog, '');
	serve = await startServe({ ...home.env, NODE_OPTIONS: `--import=${MODULE_HOOK}`, HANGAR_TEST_MODULE_LOG: moduleLog });
	receiver = await OtlpReceiver.start();
	upstream = await startFixture(fileURLToPath(new URL('./fixtures/security/protected-mcp-server.mjs', import.meta.url)));
}, 60_000);

afterAll(async () => {
	await deleteAllWorkloads(serve.url);
	await prometheus?.stop();
	upstream?.stop();
	await receiver?.stop();
	await serve?.stop();
	await home?.dispose();
}, 120_000);

describe('a workload with telemetry', { timeout: 120_000 }, () => {
	let workload: Workload;

	beforeAll(async () => {
		const authz = join(home.path, 'authz.json');
		await writeFile(authz, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: ['permit(principal, action, resource);', 'forbid(principal, action == Action::"call_tool", resource == Tool::"echo");'] } }));
		workload = await createWorkload(serve.url, {
			name: 'traced',
			url: upstream.url,
			header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } },
			authz_config: authz,
			telemetry_config: {
				endpoint: receiver.url,
				serviceName: 'hangar-test',
				tracingEnabled: true,
				metricsEnabled: true,
				enablePrometheusMetricsPath: true,
				// Every trace (the default keeps a tenth of those no client decides for).
				samplingRate: '1',
				customAttributes: { team: 'qa' },
			},
		});
	}, 120_000);

	it('sends one span per request, child of the client\'s traceparent, with the upstream span as its child and sent upstream', async () => {
		const session = await openSession(workload.url, {});
		const headers = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18', traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` };
		const answer = await postMcp(workload.url, { id: 7, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, headers);
		expect(answer.status).toBe(200);
		const upstreamTraceparent = answer.body.result.content[0].text as string;
		expect(upstreamTraceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));

		const spans = await waitFor(async () => {
			const server = receiver.spans.find((span) => span.traceId === TRACE_ID && span.name === 'tools/call traceparent');
			const child = server && receiver.spans.find((span) => span.parentSpanId === server.spanId && span.name === 'upstream tools/call');
			// Authorization's fetch of the tool annotations, a request of the proxy's own, hangs under the
			// tools/call that needed it first: this one, or another test's if that ran before.
			const annotations = receiver.spans.find((span) => span.name === 'upstream tools/list' && receiver.spans.some((call) => call.spanId === span.parentSpanId && call.name.startsWith('tools/call')));
			return server && child && annotations ? { server, child } : undefined;
		}, 'the spans at the OTLP receiver', 60_000);
		expect(spans.server).toMatchObject({
			parentSpanId: CLIENT_SPAN,
			kind: 2, // SERVER
			attributes: expect.objectContaining({
				'mcp.method.name': 'tools/call',
				'gen_ai.tool.name': 'traceparent',
				'mcp.session.id': session,
				'mcp.protocol.version': '2025-06-18',
				'jsonrpc.request.id': '7',
				'hangar.authz.decision': 'allow',
			}),
			resource: expect.objectContaining({ 'service.name': 'hangar-test', team: 'qa', 'hangar.workload': workload.name }),
		});
		expect(spans.child).toMatchObject({ name: 'upstream tools/call', kind: 3 /* CLIENT */, traceId: TRACE_ID });
		// The server saw the upstream span as its parent.
		expect(upstreamTraceparent.split('-')[2]).toBe(spans.child.spanId);
	});

	it('records the denial and the error code on the span', async () => {
		const session = await openSession(workload.url, {});
		const answer = await postMcp(workload.url, { id: 8, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, { 'Mcp-Session-Id': session });
		expect(answer.status).toBe(403);
		const denied = await waitFor<OtlpSpan>(async () => receiver.spans.find((span) => span.name === 'tools/call echo'), 'the denied span', 60_000);
		expect(denied.attributes).toMatchObject({ 'hangar.authz.decision': 'deny', 'rpc.jsonrpc.error_code': 403, 'http.response.status_code': 403 });
		expect(denied.status?.code).toBe(2); // ERROR
		// A refused call never went upstream (authorization's own fetch of the annotations may hang under it).
		expect(receiver.spans.filter((span) => span.parentSpanId === denied.spanId && span.name !== 'upstream tools/list')).toEqual([]);
	});

	it('exports metrics by OTLP, and a real Prometheus scrapes them from /metrics', async () => {
		// A call answered and one denied, of this test's own.
		const first = await openSession(workload.url, {});
		expect((await postMcp(workload.url, { id: 1, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': first })).status).toBe(200);
		expect((await postMcp(workload.url, { id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, { 'Mcp-Session-Id': first })).status).toBe(403);
		await waitFor(async () => receiver.metricNames.has('mcp.server.operation.duration') && receiver.metricNames.has('hangar.proxy.requests'), 'OTLP metrics', 60_000);
		const text = await (await fetch(`${new URL(workload.url).origin}/metrics`)).text();
		expect(text).toMatch(/^# TYPE hangar_proxy_requests_total counter$/m);

		prometheus = await PrometheusServer.start([new URL(workload.url).host]);
		const session = await openSession(workload.url, {});
		for (let id = 1; id <= 3; id++) await postMcp(workload.url, { id, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': session });
		const calls = await waitFor(
			async () => {
				const result = await prometheus!.query('hangar_proxy_requests_total{mcp_method_name="tools/call",gen_ai_tool_name="traceparent",status="ok"}');
				return result.length && Number(result[0]!.value[1]) >= 4 ? result : undefined;
			},
			'the call count in Prometheus',
			60_000,
		);
		expect(calls[0]!.metric).toMatchObject({ job: 'hangar' });
		expect(await prometheus.query('target_info{service_name="hangar-test",team="qa"}')).toHaveLength(1);
		expect(await prometheus.query('hangar_proxy_denials_total{reason="authorization"}')).toHaveLength(1);
		expect(await prometheus.query('mcp_server_operation_duration_count{mcp_method_name="tools/call"}')).not.toHaveLength(0);
		expect(await prometheus.query('mcp_server_operation_duration_bucket{mcp_method_name="tools/call",le="0.01"}')).not.toHaveLength(0);
		const sessions = await prometheus.query('hangar_proxy_sessions_active');
		expect(Number(sessions[0]?.value[1])).toBeGreaterThanOrEqual(1);
	});
});

describe('a proxy that stops', { timeout: 120_000 }, () => {
	it('sends the spans and metrics it still holds before it exits', async () => {
		const workload = await createWorkload(serve.url, {
			name: 'flushed',
			url: upstream.url,
			header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } },
			telemetry_config: { endpoint: receiver.url, tracingEnabled: true, metricsEnabled: true, samplingRate: '1' },
		});
		const session = await openSession(workload.url, {});
		const marker = 'd'.repeat(32);
		const answer = await postMcp(workload.url, { id: 1, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': session, traceparent: `00-${marker}-${CLIENT_SPAN}-01` });
		expect(answer.status).toBe(200);
		// Before the spans' two seconds and the metrics' ten are up: only the proxy's last sending delivers them.
		const stopped = await runHangar(['stop', workload.name], home.env);
		expect(stopped.code, stopped.stderr).toBe(0);
		expect(receiver.spans.filter((span) => span.traceId === marker).map((span) => span.name).sort()).toEqual(['tools/call traceparent', 'upstream tools/call']);
		expect(receiver.metricWorkloads).toContain(workload.name);
	});
});

describe('sampling', { timeout: 120_000 }, () => {
	it('follows a client\'s sampled flag, else the rate: at 0, only the client\'s sampled trace is sent; the others still propagate, unsampled', async () => {
		const workload = await createWorkload(serve.url, {
			name: 'sampled',
			url: upstream.url,
			header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } },
			telemetry_config: { endpoint: receiver.url, tracingEnabled: true, samplingRate: '0' },
		});
		const session = await openSession(workload.url, {});
		const call = (id: number, headers: Record<string, string> = {}) =>
			postMcp(workload.url, { id, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': session, ...headers });

		const unsampled = (await call(1)).body.result.content[0].text as string;
		const [, unsampledTrace, , unsampledFlags] = unsampled.split('-');
		expect(unsampledFlags).toBe('00');
		const declined = (await call(2, { traceparent: `00-${'a'.repeat(32)}-${CLIENT_SPAN}-00` })).body.result.content[0].text as string;
		expect(declined).toMatch(new RegExp(`^00-${'a'.repeat(32)}-[0-9a-f]{16}-00$`));
		const sampledTrace = 'b'.repeat(32);
		expect((await call(3, { traceparent: `00-${sampledTrace}-${CLIENT_SPAN}-01` })).body.result.content[0].text).toMatch(/-01$/);

		await waitFor(async () => receiver.spans.some((span) => span.traceId === sampledTrace && span.name === 'upstream tools/call'), 'the sampled trace', 60_000);
		// The proxy's spans go out in order, so the unsampled ones would have arrived by now.
		expect(receiver.spans.filter((span) => span.traceId === unsampledTrace || span.traceId === 'a'.repeat(32))).toEqual([]);
	});
	it('keeps a tenth of the traces no client decides for, by default (ToolHive\'s rate)', async () => {
		const workload = await createWorkload(serve.url, {
			name: 'sampled-by-default',
			url: upstream.url,
			header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } },
			telemetry_config: { endpoint: receiver.url, tracingEnabled: true },
		});
		const session = await openSession(workload.url, {});
		const calls = 300;
		const traces = new Set<string>();
		for (let id = 1; id <= calls; id++) {
			const answer = await postMcp(workload.url, { id, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': session });
			traces.add((answer.body.result.content[0].text as string).split('-')[1]!);
		}
		const marker = 'c'.repeat(32);
		await postMcp(workload.url, { id: 0, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': session, traceparent: `00-${marker}-${CLIENT_SPAN}-01` });
		await waitFor(async () => receiver.spans.some((span) => span.traceId === marker && span.name === 'upstream tools/call'), 'the marked trace', 60_000);
		const kept = new Set(receiver.spans.filter((span) => traces.has(span.traceId)).map((span) => span.traceId));
		// 30 expected; outside 8–60 happens less than once in a million runs.
		expect(kept.size).toBeGreaterThanOrEqual(8);
		expect(kept.size).toBeLessThanOrEqual(60);
	});
});

describe('the doors', { timeout: 120_000 }, () => {
	it('fills telemetry_config from --otel-* flags, and new workloads inherit the global default', async () => {
		const run = await runHangar(['telemetry', 'set', '--otel-endpoint', receiver.url, '--otel-sampling-rate', '0.5', '--otel-custom-attributes', 'env=test,tier=1'], home.env);
		expect(run.code, run.stderr).toBe(0);
		// The upstream wants a token (without one the workload would wait for an OAuth sign-in).
		const inherited = await createWorkload(serve.url, { name: 'inherits', url: upstream.url, header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } } });
		const detail = (await callRest(serve.url, GetWorkload, { name: inherited.name })).body as { telemetry_config?: object };
		expect(detail.telemetry_config).toEqual({ endpoint: receiver.url, samplingRate: '0.5', customAttributes: { env: 'test', tier: '1' }, tracingEnabled: true, metricsEnabled: true });
		expect((await runHangar(['telemetry', 'unset'], home.env)).code).toBe(0);

		const edited = await runHangar(['edit', inherited.name, '--otel-enable-prometheus-metrics-path', '--otel-service-name', 'edited'], home.env);
		expect(edited.code, edited.stderr).toBe(0);
		const after = (await callRest(serve.url, GetWorkload, { name: inherited.name })).body as { telemetry_config?: object };
		expect(after.telemetry_config).toMatchObject({ endpoint: receiver.url, serviceName: 'edited', enablePrometheusMetricsPath: true });
		const exported = (await callRest(serve.url, ExportWorkload, { name: inherited.name })).body as { telemetry_config?: object };
		expect(exported.telemetry_config).toEqual(after.telemetry_config);
	});

	it('refuses a bad telemetry_config with a 400 naming the field', async () => {
		const refused = await callRest(serve.url, CreateWorkload, { name: 'bad-otel', url: upstream.url, telemetry_config: { endpoint: receiver.url, tracingEnabled: true, samplingRate: '2' } });
		expect(refused.status).toBe(400);
		expect((refused.body as { message: string }).message).toMatch(/telemetry_config\.samplingRate/);
	});
});

describe('telemetry off', { timeout: 120_000 }, () => {
	it('loads none of OpenTelemetry in the proxy, while a proxy with telemetry does', async () => {
		const plain = await createWorkload(serve.url, { name: 'plain', url: upstream.url, header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } } });
		// The hook does record: a proxy with telemetry loads OpenTelemetry.
		const traced = await createWorkload(serve.url, { name: 'loads-otel', url: upstream.url, header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } }, telemetry_config: { endpoint: receiver.url, serviceName: 'hangar-test', tracingEnabled: true } });
		const session = await openSession(plain.url, {});
		expect((await postMcp(plain.url, { id: 1, method: 'tools/call', params: { name: 'traceparent', arguments: {} } }, { 'Mcp-Session-Id': session })).body.result.content[0].text).toBe('none');
		const lines = (await readFile(moduleLog, 'utf8')).split('\n').filter(Boolean);
		const loaders = new Set(lines.map((line) => Number(line.split(' ')[0])));
		expect(loaders.has(await proxyPid(plain.name))).toBe(false);
		expect(loaders.has(await proxyPid(traced.name))).toBe(true);
		expect(loaders.has(serve.child.pid!)).toBe(false);
	});
});

describe('call statistics (telemetry on or off)', { timeout: 120_000 }, () => {
	it('counts calls, errors and latency per workload for workloads/stats and hangar top, to the token holder only', async () => {
		const counted = await createWorkload(serve.url, { name: 'counted', url: upstream.url, header_forward: { add_plaintext_headers: { Authorization: 'Bearer good' } } });
		const session = await openSession(counted.url, {});
		for (let id = 1; id <= 3; id++) await postMcp(counted.url, { id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, { 'Mcp-Session-Id': session });
		const failed = await postMcp(counted.url, { id: 9, method: 'no/such-method', params: {} }, { 'Mcp-Session-Id': session });
		expect(failed.body.error.code).toBe(-32601);

		const answer = await callRest(serve.url, GetWorkloadStats, { name: counted.name, window: 60 });
		expect(answer.status).toBe(200);
		const stats = answer.body as WorkloadStats;
		// initialize and the four calls; the notification is no call.
		expect(stats).toMatchObject({ name: counted.name, calls: 5, errors: 1, total_calls: 5, total_errors: 1, total_tool_calls: 3, total_tool_errors: 0, last_error: { method: 'no/such-method', code: -32601 } });
		expect(stats.calls_per_second).toBeGreaterThan(0);
		expect(stats.p50_ms).toBeGreaterThan(0);
		expect(stats.p99_ms).toBeGreaterThanOrEqual(stats.p50_ms!);

		const top = await runHangar(['top', '--once', '--json', '--window', '60'], home.env);
		expect(top.code, top.stderr).toBe(0);
		expect((JSON.parse(top.stdout) as WorkloadStats[]).find((item) => item.name === counted.name)).toMatchObject({ total_calls: 5, total_errors: 1 });
		const table = await runHangar(['stats', '--no-stream'], home.env);
		expect(table.stdout).toMatch(new RegExp(`^${counted.name}\\s+[0-9.]+\\s+\\d+ms\\s+\\d+ms`, 'm'));
		expect(table.stdout).toContain('no/such-method');
		// Live, it prints a line of JSON per refresh until Ctrl-C.
		const live = spawn(process.execPath, [HANGAR_BIN, 'top', '--json', '--interval', '0.2'], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
		let streamed = '';
		live.stdout!.on('data', (chunk: Buffer) => (streamed += chunk.toString()));
		await waitFor(async () => streamed.split('\n').filter(Boolean).length >= 2 || undefined, 'two refreshes', 60_000);
		const ended = new Promise<number | null>((resolve) => live.once('close', resolve));
		live.kill('SIGINT');
		expect(await ended).toBe(0);
		for (const line of streamed.split('\n').filter(Boolean)) expect((JSON.parse(line) as WorkloadStats[]).map((item) => item.name)).toContain(counted.name);
		const badWindow = await runHangar(['top', '--once', '--window', '61'], home.env);
		expect(badWindow.code).toBe(2);
		expect(badWindow.stderr).toContain("option '-w, --window <seconds>' argument '61' is invalid. expected a whole number from 1 to 60.");

		// The proxy's endpoint wants the token from its record.
		const origin = new URL(counted.url).origin;
		expect((await fetch(`${origin}/hangar/stats`)).status).toBe(401);
		expect((await fetch(`${origin}/hangar/stats`, { headers: { Authorization: 'Bearer guess' } })).status).toBe(401);
		expect((await callRest(serve.url, GetWorkloadStats, { name: counted.name, window: 61 })).status).toBe(400);
		const stopped = await runHangar(['stop', counted.name], home.env);
		expect(stopped.code, stopped.stderr).toBe(0);
		await waitFor(async () => (await callRest(serve.url, GetWorkloadStats, { name: counted.name })).status === 409 || undefined, 'a 409 once stopped', 60_000);
	});

	it('counts tool calls apart from requests, and a tool\'s own error (isError) as a failure naming the tool', () => {
		const stats = new CallStats(() => 1_000_000);
		stats.record(3, { jsonrpc: '2.0', id: 1, result: { tools: [] } }, 'tools/list');
		stats.record(3, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'ok' }] } }, 'tools/call', 'echo');
		stats.record(3, { jsonrpc: '2.0', id: 3, result: { isError: true, content: [{ type: 'text', text: 'Unknown tool: nope' }] } }, 'tools/call', 'nope');
		expect(stats.snapshot(60)).toMatchObject({ calls: 3, errors: 1, total_calls: 3, total_errors: 1, total_tool_calls: 2, total_tool_errors: 1, last_error: { method: 'tools/call', tool: 'nope', message: 'Unknown tool: nope' } });
		expect(stats.snapshot(60).last_error).not.toHaveProperty('code');
		stats.record(3, { jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Invalid arguments' } }, 'tools/call', 'echo');
		expect(stats.snapshot(60)).toMatchObject({ errors: 2, total_tool_calls: 3, total_tool_errors: 2, last_error: { tool: 'echo', code: -32602 } });
	});

	it('keeps a minute of per-second counts: old seconds fall out of the window, percentiles come from the buckets', () => {
		let now = 1_000_000;
		const stats = new CallStats(() => now);
		for (let call = 0; call < 98; call++) stats.record(3, { jsonrpc: '2.0', id: call, result: {} }, 'tools/call');
		stats.record(700, { jsonrpc: '2.0', id: 98, result: {} }, 'tools/call');
		stats.record(40, { jsonrpc: '2.0', id: 99, error: { code: -32000, message: 'boom' } }, 'tools/call');
		now += 5_000;
		expect(stats.snapshot(10)).toMatchObject({ window_seconds: 6, calls: 100, errors: 1, p50_ms: 5, p99_ms: 50, last_error: { code: -32000, message: 'boom' } });
		now += 10_000;
		stats.record(12, { jsonrpc: '2.0', id: 100, result: {} }, 'ping');
		expect(stats.snapshot(10)).toMatchObject({ window_seconds: 10, calls: 1, errors: 0, calls_per_second: 0.1, p50_ms: 12, p99_ms: 12, total_calls: 101 });
		// Seventy seconds later the whole ring has turned.
		now += 70_000;
		expect(stats.snapshot(60)).toMatchObject({ window_seconds: 60, calls: 0, p50_ms: undefined, total_calls: 101, total_errors: 1 });
		// A clock set back: the calls still count, in the newest second.
		now -= 30_000;
		stats.record(2, { jsonrpc: '2.0', id: 101, result: {} }, 'ping');
		expect(stats.snapshot(1)).toMatchObject({ window_seconds: 1, calls: 1, total_calls: 102 });
		const early = new CallStats(() => now);
		now -= 5_000;
		expect(early.snapshot(10)).toMatchObject({ window_seconds: 1, calls: 0 });
	});
});

describe('the proxy\'s metrics', () => {
	const collected = async (metrics: ProxyMetrics) => {
		const { resourceMetrics } = await metrics.collect();
		return new Map(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((metric) => [metric.descriptor.name, metric]));
	};

	it('fill the MCP conventions\' duration buckets per method, tool and outcome, and count denials', async () => {
		const metrics = new ProxyMetrics(resourceFromAttributes({}), () => 3);
		metrics.request('tools/call', 'echo', 'ok', undefined, 0.004);
		metrics.request('tools/call', 'echo', 'ok', undefined, 0.03);
		metrics.request('tools/call', 'echo', 'ok', undefined, 400);
		metrics.request('tools/call', 'echo', 'error', -32602, 0.01);
		metrics.request('tools/call', 'secret', 'denied', 403, 0.001);
		metrics.request('tools/list', undefined, 'ok', undefined, 0.001);
		metrics.restarted();
		const byName = await collected(metrics);
		const duration = byName.get('mcp.server.operation.duration')!;
		expect(duration.dataPointType).toBe(DataPointType.HISTOGRAM);
		const echo = duration.dataPoints.find((point) => point.attributes['gen_ai.tool.name'] === 'echo' && point.attributes.status === 'ok')!;
		const value = echo.value as Histogram;
		expect(value.buckets.boundaries).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);
		// 4 ms in the first bucket, 30 ms in (0.02, 0.05], 400 s above the last bound.
		expect(value.buckets.counts).toEqual([1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
		expect(value).toMatchObject({ count: 3, min: 0.004, max: 400 });
		expect(value.sum).toBeCloseTo(400.034);
		const failed = duration.dataPoints.find((point) => point.attributes.status === 'error')!;
		expect(failed.attributes).toEqual({ 'mcp.method.name': 'tools/call', status: 'error', 'gen_ai.tool.name': 'echo', 'error.type': '-32602' });
		// A boundary is inclusive: 10 ms is in the first bucket.
		expect((failed.value as Histogram).buckets.counts[0]).toBe(1);
		const requests = byName.get('hangar.proxy.requests')!;
		expect(requests.dataPoints.map((point) => [point.attributes['mcp.method.name'], point.attributes['gen_ai.tool.name'], point.attributes.status, point.value]).sort()).toEqual(
			[
				['tools/call', 'echo', 'ok', 3],
				['tools/call', 'echo', 'error', 1],
				['tools/call', 'secret', 'denied', 1],
				['tools/list', undefined, 'ok', 1],
			].sort(),
		);
		expect(byName.get('hangar.proxy.denials')!.dataPoints).toEqual([expect.objectContaining({ attributes: { reason: 'authorization', 'mcp.method.name': 'tools/call' }, value: 1 })]);
		expect(byName.get('hangar.proxy.sessions.active')!.dataPoints[0]!.value).toBe(3);
		expect(byName.get('hangar.proxy.upstream.restarts')!.dataPoints[0]!.value).toBe(1);
	});

	it('keep at most 2,000 series of clients\' names; the calls beyond share one overflow series', async () => {
		const metrics = new ProxyMetrics(resourceFromAttributes({}), () => 0);
		for (let tool = 0; tool < 2_500; tool++) metrics.request('tools/call', `tool-${tool}`, 'ok', undefined, 0.001);
		for (let method = 0; method < 2_500; method++) metrics.request(`vendor/${method}`, undefined, 'denied', 403, 0.001);
		const byName = await collected(metrics);
		const requests = byName.get('hangar.proxy.requests')!.dataPoints;
		expect(requests).toHaveLength(2_001);
		expect(requests.find((point) => point.attributes['otel.metric.overflow'])!.value).toBe(3_000);
		expect(requests.reduce((total, point) => total + (point.value as number), 0)).toBe(5_000);
		const denials = byName.get('hangar.proxy.denials')!.dataPoints;
		expect(denials).toHaveLength(2_001);
		expect(denials.reduce((total, point) => total + (point.value as number), 0)).toBe(2_500);
	});
});

describe('the proxy\'s metric labels', () => {
	it('are at most 128 characters of a tool name\'s alphabet; a client\'s longer or odd names share the overflow series', async () => {
		const metrics = new ProxyMetrics(resourceFromAttributes({}), () => 0);
		// An attacker's names: 200 characters each, all different, and names with spaces or escapes.
		for (let at = 0; at < 1_000; at++) metrics.request('tools/call', `${'x'.repeat(196)}${String(at).padStart(4, '0')}`, 'ok', undefined, 0.001);
		metrics.request('tools/call', 'rm -rf', 'ok', undefined, 0.001);
		metrics.request('tools/call', 'echo\u001b[2J', 'ok', undefined, 0.001);
		metrics.request(`vendor/${'m'.repeat(200)}`, undefined, 'denied', 403, 0.001);
		metrics.request('tools/call', 't'.repeat(MAX_LABEL_LENGTH), 'ok', undefined, 0.001);
		const { resourceMetrics } = await metrics.collect();
		const points = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).flatMap((metric) => metric.dataPoints as Array<{ attributes: Record<string, unknown>; value: unknown }>);
		const labels = points.flatMap((point) => Object.values(point.attributes)).filter((value): value is string => typeof value === 'string');
		expect(Math.max(...labels.map((label) => label.length))).toBe(MAX_LABEL_LENGTH);
		const requests = resourceMetrics.scopeMetrics[0]!.metrics.find((metric) => metric.descriptor.name === 'hangar.proxy.requests')!.dataPoints;
		expect(requests).toHaveLength(2);
		expect(requests.find((point) => point.attributes['otel.metric.overflow'])!.value).toBe(1_003);
	});
});

describe('the daemon and hangar serve', { timeout: 120_000 }, () => {
	it('trace their own operations, one span each, when the global default turns tracing on, and send them before exiting', async () => {
		const set = await runHangar(['telemetry', 'set', '--otel-endpoint', receiver.url, '--otel-service-name', 'hangar-doors', '--otel-sampling-rate', '1'], home.env);
		expect(set.code, set.stderr).toBe(0);
		const env = { ...home.env, NODE_OPTIONS: `--import=${MODULE_HOOK}`, HANGAR_TEST_MODULE_LOG: moduleLog };
		const traced = await startServe(env);
		const daemon = spawnDaemon(env);
		try {
			expect((await callRest(traced.url, ListWorkloads, { all: true })).status).toBe(200);
			expect((await callRest(traced.url, GetWorkload, { name: 'no-such-workload' })).status).toBe(404);
			await daemon.client.initialize('telemetry-test');
			await daemon.client.request(ListWorkloads, { all: true });
			// It exits at once: its span must not wait for the next batch (5 s) and be lost.
			const exited = new Promise((resolve) => daemon.child.once('exit', resolve));
			await daemon.client.shutdown();
			await exited;
			const spanOf = (door: string, name: string) => receiver.spans.find((span) => span.resource['hangar.door'] === door && span.name === name);
			const spans = await waitFor(
				async () => {
					const found = [spanOf('serve', 'workloads/list'), spanOf('serve', 'workloads/get'), spanOf('daemon', 'workloads/list')];
					return found.every(Boolean) ? found : undefined;
				},
				'the doors\' spans',
				60_000,
			);
			expect(spans[0]).toMatchObject({ kind: 2, attributes: { 'rpc.method': 'workloads/list', 'hangar.door': 'serve' }, resource: expect.objectContaining({ 'service.name': 'hangar-doors' }) });
			expect(spans[1]).toMatchObject({ attributes: expect.objectContaining({ 'error.type': 'workload_not_found', 'http.response.status_code': 404 }), status: { code: 2 } });
			expect(spans[2]).toMatchObject({ attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': 'workloads/list' } });
			const loaders = new Set((await readFile(moduleLog, 'utf8')).split('\n').filter(Boolean).map((line) => Number(line.split(' ')[0])));
			expect(loaders.has(traced.child.pid!)).toBe(true);
		} finally {
			await daemon.stop();
			await traced.stop();
			await runHangar(['telemetry', 'unset'], home.env);
		}
	});
});
