/**
 * What the proxy's security costs: `tools/call` (echo) through Hangar's proxy to the same
 * containerised stdio server with authentication (JWT, jose) and authorization (Cedar) off
 * and on, measured in alternating rounds so the machine's other work falls on both alike;
 * then one authorization decision and one JWT verification on their own.
 *
 * The identity provider is a small jose issuer on 127.0.0.1 (discovery and JWKS), as in the
 * tests; the policies are those of test/security-authz.test.ts, one of each shape.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JWK } from 'jose';
import { loadAuthzConfig } from '../../server/runspec/authzConfig.js';
import { CedarAuthorizer } from '../../server/proxy/chain/authorization/cedarAuthorizer.js';
import { argumentAttributes, hintAttributes } from '../../server/proxy/chain/authorization/cedarEntities.js';
import { TokenValidator } from '../../server/proxy/chain/authentication/tokenValidator.js';
import { AUDIENCE, CLAIMS, startIssuer, type Issuer } from '../issuer.js';
import { benchEnv, runHangar } from '../processes.js';
import { median, ms, percentile, perSecond, timed, verdict, type Table } from '../stats.js';

const IMAGE = 'hangar-test/everything:1';
const ROUNDS = 5;
const SEQUENTIAL = 1_000;
const CLIENTS = 16;
const PER_CLIENT = 100;
const DECISIONS = 20_000;
const VERIFICATIONS = 3_000;

const POLICIES = [
	'permit(principal == Client::"alice", action == Action::"call_tool", resource == Tool::"echo");',
	'permit(principal, action == Action::"get_prompt", resource == Prompt::"simple-prompt");',
	'permit(principal, action == Action::"call_tool", resource == Tool::"get-sum") when { principal.claim_roles.contains("calculator") };',
	'forbid(principal, action == Action::"call_tool", resource == Tool::"get-sum") when { principal.claim_roles.contains("intern") };',
	'permit(principal == Client::"bob", action == Action::"call_tool", resource == Tool::"echo") when { resource.arg_message == "public" };',
	'permit(principal in THVGroup::"eng", action == Action::"read_resource", resource);',
	'forbid(principal, action == Action::"read_resource", resource == Resource::"demo://resource/static/document/startup.md");',
	'permit(principal in THVGroup::"readers", action == Action::"call_tool", resource) when { resource has readOnlyHint && resource.readOnlyHint };',
	'permit(principal == Client::"carol", action == Action::"call_tool", resource == Tool::"Echo");',
	'permit(principal, action == Action::"call_tool", resource == Tool::"get-tiny-image") when { principal.claim_department == "imaging" };',
	'permit(principal in THVGroup::"eng", action == Action::"get_prompt", resource == Prompt::"args-prompt") when { resource.arg_city == "Paris" };',
	'permit(principal in THVGroup::"staff", action == Action::"get_prompt", resource == Prompt::"completable-prompt");',
];
const ENTITIES = [{ uid: { type: 'THVGroup', id: 'eng' }, attrs: {}, parents: [{ type: 'THVGroup', id: 'staff' }] }];
async function httpClient(url: string, headers: Record<string, string>): Promise<Client> {
	const client = new Client({ name: 'bench', version: '1.0.0' });
	await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
	return client;
}

const echo = (client: Client) => client.callTool({ name: 'echo', arguments: { message: 'hello from the benchmark' } });

interface Front {
	readonly name: string;
	client(): Promise<Client>;
}

interface Round {
	readonly latencies: number[];
	readonly rate: number;
}

async function sequential(front: Front): Promise<Round> {
	const client = await front.client();
	try {
		for (let index = 0; index < 100; index++) await echo(client);
		const latencies: number[] = [];
		const started = performance.now();
		for (let index = 0; index < SEQUENTIAL; index++) {
			const sent = performance.now();
			await echo(client);
			latencies.push(performance.now() - sent);
		}
		return { latencies, rate: SEQUENTIAL / ((performance.now() - started) / 1000) };
	} finally {
		await client.close();
	}
}

async function concurrent(front: Front): Promise<Round> {
	const clients = await Promise.all(Array.from({ length: CLIENTS }, () => front.client()));
	try {
		await Promise.all(clients.map(async (client) => { for (let index = 0; index < 10; index++) await echo(client); }));
		const latencies: number[] = [];
		const started = performance.now();
		await Promise.all(
			clients.map(async (client) => {
				for (let index = 0; index < PER_CLIENT; index++) {
					const sent = performance.now();
					await echo(client);
					latencies.push(performance.now() - sent);
				}
			}),
		);
		return { latencies, rate: (CLIENTS * PER_CLIENT) / ((performance.now() - started) / 1000) };
	} finally {
		await Promise.all(clients.map((client) => client.close()));
	}
}

const mean = (a: number, b: number) => (a + b) / 2;

interface Measured {
	readonly sequential: ReturnType<typeof summary>;
	readonly concurrent: ReturnType<typeof summary>;
}

/** The median round's rate and the pooled latencies of every round. */
function summary(rounds: Round[]): { p50: number; p99: number; rate: number } {
	const latencies = rounds.flatMap((round) => round.latencies);
	return { p50: median(latencies), p99: percentile(latencies, 99), rate: median(rounds.map((round) => round.rate)) };
}

async function proxy(issuer: Issuer): Promise<Table> {
	const env = benchEnv();
	const folder = await mkdtemp(join(tmpdir(), 'hangar-bench-authz-'));
	const policies = join(folder, 'authz.json');
	await writeFile(policies, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: POLICIES, entities_json: JSON.stringify(ENTITIES) } }));
	const run = async (name: string, flags: string[]) =>
		(JSON.parse(await runHangar(['run', IMAGE, '--name', name, '--transport', 'stdio', '--json', ...flags, '--', 'stdio'], env)) as { url: string }).url;
	try {
		const plainUrl = await run('bench-plain', []);
		const twinUrl = await run('bench-twin', []);
		const secureUrl = await run('bench-secure', ['--oidc-issuer', issuer.url, '--oidc-audience', AUDIENCE, '--authz-config', policies]);
		const token = await issuer.sign('RS256', 'rita');
		// Two identical workloads without security show how far apart containers of the same server are here.
		const fronts: Front[] = [
			{ name: 'security off', client: () => httpClient(plainUrl, {}) },
			{ name: 'security off (an identical second workload)', client: () => httpClient(twinUrl, {}) },
			{ name: 'authentication + authorization on', client: () => httpClient(secureUrl, { Authorization: `Bearer ${token}` }) },
		];
		const results = fronts.map(() => ({ sequential: [] as Round[], concurrent: [] as Round[] }));
		for (let round = 0; round < ROUNDS; round++) {
			// Each round starts with another front, so that none always comes first.
			const order = fronts.map((_, index) => (index + round) % fronts.length);
			for (const index of order) results[index]!.sequential.push(await sequential(fronts[index]!));
			for (const index of order) results[index]!.concurrent.push(await concurrent(fronts[index]!));
		}
		const [off, twin, on] = results.map((result): Measured => ({ sequential: summary(result.sequential), concurrent: summary(result.concurrent) })) as [Measured, Measured, Measured];
		return {
			title: `tools/call (echo) through Hangar's proxy to \`docker run -i\` of a stdio server, security off and on: sequential (${ROUNDS} rounds of ${SEQUENTIAL.toLocaleString('en-US')} calls) and ${CLIENTS} concurrent clients (${ROUNDS} rounds of ${PER_CLIENT} calls each), rounds interleaved; rates are the median round's`,
			columns: ['proxy', 'sequential p50', 'sequential p99', 'sequential', `${CLIENTS} clients p50`, `${CLIENTS} clients`],
			rows: fronts.map((front, index) => {
				const result = [off, twin, on][index]!;
				return [front.name, ms(result.sequential.p50), ms(result.sequential.p99), perSecond(result.sequential.rate), ms(result.concurrent.p50), perSecond(result.concurrent.rate)];
			}),
			verdicts: [
				verdict('sequential throughput, on vs off (the mean of both)', on.sequential.rate / mean(off.sequential.rate, twin.sequential.rate), 0.9, true),
				verdict(`${CLIENTS}-client throughput, on vs off (the mean of both)`, on.concurrent.rate / mean(off.concurrent.rate, twin.concurrent.rate), 0.9, true),
				`p50 added by security: ${ms(on.sequential.p50 - mean(off.sequential.p50, twin.sequential.p50))} sequential`,
				`noise: the identical second workload ran at ${(twin.sequential.rate / off.sequential.rate).toFixed(2)}× (sequential) and ${(twin.concurrent.rate / off.concurrent.rate).toFixed(2)}× (${CLIENTS} clients) of the first`,
			],
		};
	} finally {
		await runHangar(['rm', 'bench-plain', 'bench-twin', 'bench-secure'], env).catch(() => undefined);
		await rm(env.HANGAR_HOME!, { recursive: true, force: true });
		await rm(folder, { recursive: true, force: true });
	}
}

function micro(samples: number[]): { p50: number; p99: number } {
	return { p50: median(samples) * 1000, p99: percentile(samples, 99) * 1000 };
}

const us = (value: number) => `${value.toFixed(1)} µs`;

/** Per-call times of `work`, after a warm-up, in µs. */
function timedSync(count: number, work: (index: number) => unknown): { p50: number; p99: number } {
	for (let index = 0; index < 2_000; index++) work(-index - 1);
	const samples: number[] = [];
	for (let index = 0; index < count; index++) {
		const started = performance.now();
		work(index);
		samples.push(performance.now() - started);
	}
	return micro(samples);
}

async function decisions(): Promise<{ rows: string[][]; p50: number }> {
	const folder = await mkdtemp(join(tmpdir(), 'hangar-bench-authz-'));
	const file = join(folder, 'authz.json');
	await writeFile(file, JSON.stringify({ version: '1.0', type: 'cedarv1', cedar: { policies: POLICIES, entities_json: JSON.stringify(ENTITIES) } }));
	const authorizer = await CedarAuthorizer.create(await loadAuthzConfig(file), 'bench');
	await rm(folder, { recursive: true, force: true });
	const hints = hintAttributes({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
	// A new identity each time, as each request's verified token would be: the principal is built every time.
	const decide = (message: string) => {
		const args = argumentAttributes({ message });
		return authorizer.authorize({ subject: 'rita', claims: { ...CLAIMS, sub: 'rita' } }, 'call_tool', 'Tool', 'echo', { name: 'echo', operation: 'call', feature: 'tool', ...hints, ...args }, args);
	};
	if (!decide('hello').allowed) throw new Error('the benchmark decision should be allowed');
	// A policy reads arg_message: a new message is a decision Cedar has not made yet.
	const fresh = timedSync(DECISIONS, (index) => decide(`message ${index}`));
	const repeated = timedSync(DECISIONS, () => decide('hello'));
	// The floor: one call into Cedar with the same policies and nothing to read.
	const cedar = await import('@cedar-policy/cedar-wasm/nodejs');
	cedar.preparsePolicySet('bench-floor', { staticPolicies: Object.fromEntries(POLICIES.map((policy, index) => [`policy${index}`, policy])) });
	const floor = timedSync(DECISIONS, () =>
		cedar.statefulIsAuthorized({ principal: { type: 'Client', id: 'rita' }, action: { type: 'Action', id: 'call_tool' }, resource: { type: 'Tool', id: 'echo' }, context: {}, preparsedPolicySetId: 'bench-floor', entities: [] }),
	);
	const what = `Cedar decision: tools/call echo, ${POLICIES.length} policies, entities_json, 11 claims`;
	return {
		rows: [
			[`${what}, new arguments (evaluated)`, us(fresh.p50), us(fresh.p99), '≤ 50 µs'],
			[`${what}, arguments seen before (remembered)`, us(repeated.p50), us(repeated.p99), '≤ 50 µs'],
			['floor: statefulIsAuthorized, same policies, no entities, empty context', us(floor.p50), us(floor.p99), '—'],
		],
		p50: fresh.p50,
	};
}

async function verifications(issuer: Issuer): Promise<{ rows: string[][]; p50: number }> {
	const validator = await TokenValidator.create({ issuer: issuer.url, audience: AUDIENCE });
	const rows: string[][] = [];
	let rsa = Number.NaN;
	for (const alg of ['RS256', 'ES256'] as const) {
		// Distinct tokens (jti), so each is verified in full.
		const tokens = await Promise.all(Array.from({ length: VERIFICATIONS + 500 }, (_, index) => issuer.sign(alg, 'rita', `t${index}`)));
		for (const token of tokens.slice(VERIFICATIONS)) await validator.verify(token);
		const { p50, p99 } = micro(await timed(VERIFICATIONS, (index) => validator.verify(tokens[index]!)));
		if (alg === 'RS256') rsa = p50;
		rows.push([`JWT verification, ${alg}, a new token (keys cached)`, us(p50), us(p99), alg === 'RS256' ? '≤ 80 µs' : '—']);
	}
	const again = await issuer.sign('RS256', 'rita', 'again');
	await validator.verify(again);
	const remembered = micro(await timed(VERIFICATIONS, () => validator.verify(again)));
	rows.push(['JWT verification, a token verified before (remembered)', us(remembered.p50), us(remembered.p99), '—']);
	// The floors: the RS256 signature check alone, as jose does it (WebCrypto) and synchronously.
	const [header, payload, signature] = again.split('.') as [string, string, string];
	const data = Buffer.from(`${header}.${payload}`);
	const signatureBytes = Buffer.from(signature, 'base64url');
	const jwk = (await (await fetch(`${issuer.url}/certs`)).json()) as { keys: Array<JWK & { kid: string }> };
	const publicJwk = jwk.keys.find((key) => key.kid === 'RS256')!;
	const webKey = await crypto.subtle.importKey('jwk', publicJwk, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
	const subtle = micro(await timed(VERIFICATIONS, () => crypto.subtle.verify('RSASSA-PKCS1-v1_5', webKey, signatureBytes, data)));
	const keyObject = createPublicKey({ key: publicJwk, format: 'jwk' });
	const sync = timedSync(VERIFICATIONS, () => verifySignature('RSA-SHA256', data, keyObject, signatureBytes));
	rows.push(['floor: the RS256 signature alone, crypto.subtle.verify (what jose uses)', us(subtle.p50), us(subtle.p99), '—']);
	rows.push(['floor: the RS256 signature alone, node:crypto verify (synchronous)', us(sync.p50), us(sync.p99), '—']);
	return { rows, p50: rsa };
}

export async function security(): Promise<Table[]> {
	const issuer = await startIssuer();
	try {
		const decided = await decisions();
		const verified = await verifications(issuer);
		const costs: Table = {
			title: `One authorization decision (${DECISIONS.toLocaleString('en-US')} of each kind) and one token verification (${VERIFICATIONS.toLocaleString('en-US')} of each kind), in process`,
			columns: ['work', 'p50', 'p99', 'target p50'],
			rows: [...decided.rows, ...verified.rows],
			verdicts: [
				`authorization decision p50, evaluated: ${us(decided.p50)} (target ≤ 50 µs) — ${decided.p50 <= 50 ? 'met' : 'MISSED'}`,
				`JWT verification p50, RS256, a new token: ${us(verified.p50)} (target ≤ 80 µs) — ${verified.p50 <= 80 ? 'met' : 'MISSED'}`,
			],
		};
		return [await proxy(issuer), costs];
	} finally {
		issuer.stop();
	}
}
