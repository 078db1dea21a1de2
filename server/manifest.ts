/**
 * What the build writes next to the operation table (scripts/write-manifest.mjs): its method
 * and notification names, and each row's plain params schema (protocol/plainParams.ts).
 * Reading them costs a file read; importing the table costs zod.
 */
import { readFileSync } from 'node:fs';
import type { JsonSchema } from '../protocol/plainParams.js';
import type { PlainParamsCheck } from './dispatch.js';
import { jsonSchemaCheck } from './store/jsonSchema.js';

export interface Manifest {
	readonly methods: readonly string[];
	readonly notifications: readonly string[];
	/** By method; a row whose params zod must always check has none. */
	readonly params: Readonly<Record<string, JsonSchema>>;
}

const MANIFEST = new URL('../protocol/manifest.json', import.meta.url);

/** The build's manifest; throws when there is no build (run from source). */
export function readManifest(): Manifest {
	return JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest;
}

/** The plain params checks of the build's manifest, each compiled on first use; undefined without a build. */
export function plainParamsOfBuild(): PlainParamsCheck | undefined {
	let schemas: Manifest['params'];
	try {
		schemas = readManifest().params;
	} catch {
		return undefined;
	}
	const checks = new Map<string, ReturnType<typeof jsonSchemaCheck>>();
	return (method, params) => {
		const schema = Object.hasOwn(schemas, method) ? schemas[method] : undefined;
		if (!schema) return undefined;
		let check = checks.get(method);
		if (!check) checks.set(method, (check = jsonSchemaCheck(schema)));
		const parsed = check.safeParse(params);
		return parsed.success ? { data: parsed.data } : undefined;
	};
}
