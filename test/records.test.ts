/**
 * The records a workload's proxy reads are checked with JSON Schemas generated from their zod
 * schemas (server/runspec/records.ts), so that the proxy does not load zod: the generated file
 * stays equal to what the zod schemas give, the checks parse as zod does, and a proxy whose
 * run configuration was tampered with says so, without a stack.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordSchemas } from '../server/runspec/records.generated.js';
import { jsonSchemaOf, RECORDS, recordJsonSchemas, type StoredWorkload } from '../server/runspec/records.js';
import { operations } from '../protocol/index.js';
import { plainSchemaOf } from '../protocol/plainParams.js';
import { jsonSchemaCheck, SUPPORTED_KEYWORDS } from '../server/store/jsonSchema.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

const workload = {
	name: 'notes',
	image: 'ghcr.io/example/notes:1',
	transport: 'stdio',
	port: 41_000,
	created_at: '2026-11-28T00:00:00.000Z',
	restart_policy: 'unless-stopped',
	env_vars: { LEVEL: 'debug' },
	permission_profile: { network: { outbound: { allow_host: ['example.com'], allow_port: [443] } }, read: ['/data'] },
	tools_override: { echo: { name: 'say', description: 'Says it back' } },
	header_forward: { add_plaintext_headers: { 'X-Team': 'blue' } },
	tool_pinning: 'warn',
	/** Not in the schema: zod drops it, and so must the check. */
	written_by_a_newer_hangar: true,
};
const pins = {
	tools: {
		pinned: { echo: { fingerprint: 'abc', definition: { name: 'echo', inputSchema: { type: 'object' }, extra: [1, null] }, flags: [{ rule: 'credentials', detail: 'asks for a token' }], pinned_at: 'then', stray: 1 } },
		observed: { '': { at: 'now', complete: true, items: {} } },
	},
};

/** Each sample record with what it is checked as. */
const samples: Array<[keyof typeof RECORDS, unknown]> = [
	['StoredWorkload', workload],
	['StoredWorkload', { ...workload, port: '41000' }],
	['StoredWorkload', { ...workload, tools_override: { echo: { name: 7 } } }],
	['StoredWorkload', { ...workload, transport: 'carrier-pigeon' }],
	['StoredWorkload', { ...workload, port: 41_000.5 }],
	['StoredWorkload', { image: 'no name' }],
	['StoredStatus', { status: 'running', updated_at: 'now', status_context: 'ok' }],
	['StoredStatus', { status: 'sleeping', updated_at: 'now' }],
	['ProxyRecord', { pid: 1, host: '127.0.0.1', port: 2, started_at: 'then', backend: 'connected', tool_pinning: 'off' }],
	['ProxyRecord', { pid: 1, host: '127.0.0.1', port: 2, started_at: 'then', backend: 'connected', sessions_shared: 'yes' }],
	['WorkloadPins', pins],
	['WorkloadPins', { tools: { pinned: { echo: { fingerprint: 'abc', definition: [] } }, observed: {} } }],
	['PinningDefaults', { tool_pinning: 'block' }],
	['PinningDefaults', []],
];

describe('the generated checks of the records', () => {
	it('are the JSON Schemas of the zod schemas today (else run `npm run records`)', () => {
		expect(recordSchemas).toEqual(recordJsonSchemas());
	});

	it.each(samples.map(([record, document], index) => [index, record, document] as const))('sample %i (%s) parses as zod parses it', (_index, record, document) => {
		const expected = RECORDS[record].safeParse(document);
		const actual = jsonSchemaCheck(recordSchemas[record]).safeParse(document);
		expect(actual.success).toBe(expected.success);
		if (expected.success && actual.success) expect(actual.data).toEqual(expected.data);
	});

	it('name the field that is wrong', () => {
		const result = jsonSchemaCheck(recordSchemas.StoredWorkload).safeParse({ ...workload, permission_profile: { network: { outbound: { allow_port: ['https'] } } } });
		expect(result).toEqual({ success: false, error: { issues: [{ message: 'field permission_profile.network.outbound.allow_port[0]: expected integer, got string' }] } });
	});

	it('keep a `__proto__` key a field', () => {
		const result = jsonSchemaCheck<StoredWorkload>(recordSchemas.StoredWorkload).safeParse(JSON.parse('{"name":"n","created_at":"t","restart_policy":"no","env_vars":{"__proto__":"yes"}}'));
		expect(result.success && Object.getPrototypeOf(result.data.env_vars)).toBe(Object.prototype);
		expect(result.success && Object.keys(result.data.env_vars!)).toEqual(['__proto__']);
	});

	it('refuse a schema they cannot check: a keyword outside the subset, a refinement', () => {
		expect(() => jsonSchemaCheck({ type: 'string', format: 'email' })).toThrow('JSON Schema keyword format is not supported');
		// Deep inside, a part of the check is compiled when a value first reaches it, and refused then.
		const deep = jsonSchemaCheck({ type: 'object', properties: { members: { type: 'array', items: { anyOf: [{ type: 'object', properties: { id: { type: 'string', format: 'uuid' } } }] } } } });
		expect(deep.safeParse({}).success).toBe(true);
		expect(() => deep.safeParse({ members: [{ id: 'a' }] })).toThrow('JSON Schema keyword format is not supported');
	});

	it('are written, as the params schemas are, with only the keywords the check reads', () => {
		const outside = (schema: unknown, at: string): string[] => {
			if (typeof schema !== 'object' || schema === null) return [];
			if (Array.isArray(schema)) return schema.flatMap((entry, index) => outside(entry, `${at}[${index}]`));
			const own = Object.keys(schema).filter((keyword) => !SUPPORTED_KEYWORDS.has(keyword)).map((keyword) => `${at}.${keyword}`);
			const { properties, ...rest } = schema as Record<string, unknown>;
			const inProperties = Object.entries((properties ?? {}) as Record<string, unknown>).flatMap(([name, property]) => outside(property, `${at}.properties.${name}`));
			const inOthers = ['additionalProperties', 'propertyNames', 'items', 'anyOf', 'allOf', 'not'].flatMap((keyword) => outside(rest[keyword], `${at}.${keyword}`));
			return [...own, ...inProperties, ...inOthers];
		};
		const params = operations.map((row) => [row.method, plainSchemaOf(row.params)] as const).filter(([, schema]) => schema !== false);
		expect(params.length).toBeGreaterThan(40);
		expect([...Object.entries(recordSchemas), ...params].flatMap(([name, schema]) => outside(schema, name))).toEqual([]);
		expect(outside({ type: 'object', properties: { id: { anyOf: [{ type: 'string', format: 'uuid' }] } } }, 'planted')).toEqual(['planted.properties.id.anyOf[0].format']);
		expect(() => jsonSchemaOf(z.object({ name: z.string().refine((name) => name !== '') }))).toThrow(/refinement/);
	});
});

describe('a proxy whose run configuration was tampered with', () => {
	let home: TestHome;
	beforeAll(async () => {
		home = await createTestHome();
	});
	afterAll(async () => {
		await home?.dispose();
	});

	it('fails saying which field is wrong, without a stack', async () => {
		const folder = join(home.path, 'state', 'runconfigs');
		await mkdir(folder, { recursive: true });
		await writeFile(join(folder, 'tampered.json'), JSON.stringify({ schema_version: 1, ...workload, name: 'tampered', port: 'eighty' }));
		const result = await runHangar(['proxy', 'tampered'], home.env);
		expect(result.code).toBe(1);
		expect(result.stderr).toMatch(/cannot read the run configuration: state file \S+tampered\.json is malformed: field port: expected integer, got string/);
		expect(result.stderr).not.toMatch(/^\s+at /m);
	});
});
