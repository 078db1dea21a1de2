/**
 * The contract test: every row of the operation table, called with its example over a real
 * spawned `hangar daemon` (stdio JSON-RPC) and a real `hangar serve` (HTTP). Both doors must
 * agree; results must validate against the row's schema (and ToolHive's OpenAPI where
 * ToolHive has the route); failures must carry a status the row lists. Rows whose services
 * are not built yet answer 501 `not_implemented`, and the test reports them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HangarError, operations, type OperationDefinition } from '../protocol/index.js';
import { pathParams } from '../protocol/operation.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';
import { callRest } from './support/rest.js';
import { toolhiveRequestWithEveryField, toolhiveResponseSchema, toolhiveViolations } from './support/toolhive-openapi.js';
import { CreateWorkloadParams, UpdateWorkloadParams } from '../protocol/protocol.workloads.js';

let rpcHome: TestHome;
let restHome: TestHome;
let daemon: DaemonProcess;
let serve: ServeProcess;
const notImplemented: string[] = [];

beforeAll(async () => {
	[rpcHome, restHome] = await Promise.all([createTestHome(), createTestHome()]);
	daemon = spawnDaemon(rpcHome.env);
	await daemon.client.initialize('contract-test');
	serve = await startServe(restHome.env);
});

afterAll(async () => {
	await Promise.all([daemon?.stop(), serve?.stop()]);
	await Promise.all([rpcHome?.dispose(), restHome?.dispose()]);
	if (notImplemented.length) console.info(`Rows answering 501 not_implemented (${notImplemented.length}): ${notImplemented.join(', ')}`);
});

/** The first required param the row reads from the body (or, failing that, the path). */
function requiredField(row: OperationDefinition, door: 'rpc' | 'rest'): string | undefined {
	const schema = z.toJSONSchema(row.params, { io: 'input', unrepresentable: 'any' }) as { required?: string[] };
	const inPath = new Set(pathParams(row.rest.path));
	const inQuery = new Set(row.rest.query ?? []);
	const required = schema.required ?? [];
	return required.find((name) => !inPath.has(name) && !inQuery.has(name)) ?? (door === 'rpc' ? required[0] : undefined);
}

function withoutField(example: unknown, field: string): Record<string, unknown> {
	const { [field]: _removed, ...rest } = example as Record<string, unknown>;
	return rest;
}

describe.each(operations.map((row) => ({ method: row.method, row })))('$method', ({ row }) => {
	it('answers its example the same way over RPC and REST', async () => {
		const example = row.example as Record<string, unknown>;
		let rpcStatus: number = row.rest.status;
		try {
			const result = await daemon.client.request(row, example);
			const parsed = row.result.safeParse(result);
			expect(parsed.success ? [] : parsed.error.issues, 'RPC result matches the row result schema').toEqual([]);
		} catch (error) {
			expect(error).toBeInstanceOf(HangarError);
			rpcStatus = (error as HangarError).status;
			if (rpcStatus === 501) notImplemented.push(row.method);
			else expect([...row.errors], `${row.method} failed with ${rpcStatus}: ${(error as Error).message}`).toContain(rpcStatus);
		}

		const rest = await callRest(serve.url, row, example);
		expect(rest.status, `REST ${row.rest.verb} ${row.rest.path}: ${JSON.stringify(rest.body)}`).toBe(rpcStatus);
		if (rest.status !== row.rest.status) {
			expect(rest.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
			return;
		}
		if (row.rest.status === 204 || row.rest.response === 'empty') {
			expect(rest.body).toBeUndefined();
			return;
		}
		const parsed = row.result.safeParse(rest.body);
		expect(parsed.success ? [] : parsed.error.issues, 'REST result matches the row result schema').toEqual([]);
		const toolhive = toolhiveResponseSchema(row.rest.verb, row.rest.path, row.rest.status);
		if (toolhive) expect(toolhiveViolations(toolhive, rest.body), "REST result matches ToolHive's OpenAPI").toEqual([]);
	});

	// Rows without required params have no missing-param case to test.
	const rpcField = requiredField(row, 'rpc');
	if (rpcField !== undefined) {
		it(`RPC: a missing required param (${rpcField}) is a 400 naming it`, async () => {
			const error = await hangarErrorOf(daemon.client.request(row, withoutField(row.example, rpcField) as never));
			expect(error.status).toBe(400);
			expect(error.message).toContain(rpcField);
		});
	}

	const restField = requiredField(row, 'rest');
	if (restField !== undefined) {
		it(`REST: a missing required body field (${restField}) is a 400 naming it`, async () => {
			const rest = await callRest(serve.url, row, withoutField(row.example, restField));
			expect(rest.status).toBe(400);
			expect(rest.body).toMatchObject({ code: 'invalid_params', message: expect.stringContaining(restField) });
		});
	}
});

describe("ToolHive's request bodies", () => {
	// Hangar refuses a field it does not know: every field ToolHive's clients may send must be one it knows.
	it.each([
		{ toolhive: 'pkg_api_v1.createRequest', params: CreateWorkloadParams },
		{ toolhive: 'pkg_api_v1.updateRequest', params: UpdateWorkloadParams },
	])('every field of $toolhive, at any depth, is a field Hangar knows', ({ toolhive, params }) => {
		const body = { ...toolhiveRequestWithEveryField(toolhive), name: 'every-field' };
		const parsed = params.safeParse(body);
		const unknown = (parsed.error?.issues ?? []).filter((issue) => issue.code === 'unrecognized_keys');
		expect(unknown).toEqual([]);
	});
});
