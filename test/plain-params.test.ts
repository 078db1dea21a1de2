/**
 * The plain params schemas (protocol/plainParams.ts) let a door check params without zod. They
 * may refuse what zod accepts (zod then decides), never accept what zod refuses or changes:
 * every row of the table is tried with its example and with each field left out, emptied, of
 * another type, or named wrong, and whatever the plain check accepts, zod accepts unchanged.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operations } from '../protocol/index.js';
import { plainSchemaOf, type JsonSchema } from '../protocol/plainParams.js';
import { Dispatcher, implement, type Area } from '../server/dispatch.js';
import { createLogger } from '../server/log.js';
import { jsonSchemaCheck } from '../server/store/jsonSchema.js';
import { contextFor } from '../server/context.js';
import type { OperationDefinition } from '../protocol/operation.js';

const ODD_VALUES: unknown[] = [undefined, null, '', 'true', '1', 'a  b', ' a', '..', '-', 'x'.repeat(300), 0, 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, true, [], ['a'], {}, { a: 1 }];

/** The example, then each field (and each field of a field) left out or set to each odd value, then an unknown field. */
function variantsOf(example: unknown): unknown[] {
	const variants: unknown[] = [example, {}, undefined, 'params', []];
	if (typeof example !== 'object' || example === null || Array.isArray(example)) return variants;
	const record = example as Record<string, unknown>;
	for (const [key, value] of Object.entries(record)) {
		const { [key]: _left, ...without } = record;
		variants.push(without);
		for (const odd of ODD_VALUES) variants.push({ ...record, [key]: odd });
		if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
			for (const inner of variantsOf(value).slice(5)) variants.push({ ...record, [key]: inner });
		}
	}
	variants.push({ ...record, not_a_field: 1 });
	return variants;
}

describe('the plain params schemas', () => {
	it.each(operations.map((row) => [row.method, row] as const))('%s: accept only what zod accepts unchanged', (_method, row) => {
		const plain = plainSchemaOf(row.params);
		if (plain === false) return;
		const check = jsonSchemaCheck<unknown>(plain);
		for (const params of variantsOf(row.example)) {
			const fast = check.safeParse(params);
			if (!fast.success) continue;
			const slow = row.params.safeParse(params);
			expect(slow.success, `${JSON.stringify(params)} passed the plain check but not zod`).toBe(true);
			expect(fast.data, JSON.stringify(params)).toEqual(slow.data);
		}
	});

	it("accept the everyday commands' params", () => {
		const plainOf = (method: string) => plainSchemaOf(operations.find((row) => row.method === method)!.params);
		const accepts = (method: string, params: unknown) => {
			const plain = plainOf(method);
			return plain !== false && jsonSchemaCheck(plain).safeParse(params).success;
		};
		expect(accepts('groups/list', {})).toBe(true);
		expect(accepts('clients/list', {})).toBe(true);
		expect(accepts('workloads/list', { all: true, group: 'default' })).toBe(true);
		expect(accepts('workloads/logs', { name: 'notes' })).toBe(true);
		expect(accepts('workloads/get', { name: 'notes' })).toBe(true);
		expect(accepts('skills/list', { scope: 'user' })).toBe(true);
	});

	it('leave to zod what it changes or checks in code: a default, a query string, a refinement', () => {
		const refinedName = z.object({ name: z.string().refine((name) => name !== 'x') });
		expect(jsonSchemaCheck(plainSchemaOf(refinedName) as JsonSchema).safeParse({ name: 'y' }).success).toBe(false);
		expect(plainSchemaOf(z.object({ limit: z.number().default(10) }))).toBe(false);
		const queryBoolean = z.object({ all: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).optional() });
		const check = jsonSchemaCheck(plainSchemaOf(queryBoolean) as JsonSchema);
		expect(check.safeParse({ all: true }).success).toBe(true);
		expect(check.safeParse({ all: 'true' }).success).toBe(false);
		expect(check.safeParse({ all: undefined }).success).toBe(true);
		const strict = jsonSchemaCheck(plainSchemaOf(z.strictObject({ name: z.string() })) as JsonSchema);
		expect(strict.safeParse({ name: 'a', other: 1 }).success).toBe(false);
		expect(jsonSchemaCheck(plainSchemaOf(z.object({ n: z.number() })) as JsonSchema).safeParse({ n: Number.NaN }).success).toBe(false);
	});
});

describe('the dispatcher with plain params checks', () => {
	const Row = { method: 'demo/get', summary: '', params: z.object({ name: z.string().regex(/^[a-z]+$/), limit: z.number().default(5) }), result: z.unknown(), rest: { verb: 'GET', path: '/demo', status: 200 }, errors: [400] } as unknown as OperationDefinition;

	function dispatcherOf(seen: unknown[]): { dispatcher: Dispatcher; rowsLoaded: () => number } {
		let loads = 0;
		const area = async (): Promise<Area> => ({
			rows: async () => {
				loads++;
				return [Row];
			},
			implementations: [
				implement('demo/get' as never, (params) => {
					seen.push(params);
					return null as never;
				}),
			],
		});
		const plain = jsonSchemaCheck<unknown>({ type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$' }, limit: { type: 'number' } }, required: ['name', 'limit'] });
		const dispatcher = new Dispatcher(new Map([['demo', area]]), createLogger('cli'), (method, params) => {
			if (method !== 'demo/get') return undefined;
			const parsed = plain.safeParse(params);
			return parsed.success ? { data: parsed.data } : undefined;
		});
		return { dispatcher, rowsLoaded: () => loads };
	}

	it('runs a call whose params pass the plain check without loading the rows, and hands the rest to zod', async () => {
		const seen: unknown[] = [];
		const { dispatcher, rowsLoaded } = dispatcherOf(seen);
		const context = contextFor(new AbortController().signal);
		await dispatcher.call('demo/get', { name: 'a', limit: 1 }, context);
		expect(rowsLoaded()).toBe(0);
		await dispatcher.call('demo/get', { name: 'b' }, context);
		expect(rowsLoaded()).toBe(1);
		expect(seen).toEqual([{ name: 'a', limit: 1 }, { name: 'b', limit: 5 }]);
		await expect(dispatcher.call('demo/get', { name: 'B', limit: 1 }, context)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('invalid name') });
		await expect(dispatcher.call('demo/get', { name: 'a', limit: 1, ['__proto__']: {} }, context)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('__proto__') });
		await expect(dispatcher.call('demo/other', {}, context)).rejects.toMatchObject({ status: 404 });
	});
});
