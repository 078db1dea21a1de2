/**
 * Validates Hangar's REST responses against ToolHive's own OpenAPI document, read from
 * ../shared: what ToolHive clients parse, Hangar must answer.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';

const DOCUMENT_PATH = fileURLToPath(new URL('../../../shared/reference/data/toolhive-openapi.json', import.meta.url));

interface OpenApi {
	paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
	components: unknown;
}

const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as OpenApi;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: 'toolhive', components: document.components });

/** ToolHive's schema of a success response, with refs resolved against its document. */
export function toolhiveResponseSchema(verb: string, path: string, status: number): unknown {
	const schema = document.paths[path]?.[verb.toLowerCase()]?.responses?.[String(status)]?.content?.['application/json']?.schema;
	if (!schema) return undefined;
	return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"toolhive#/components/'));
}

/** Errors of `body` against ToolHive's schema, or an empty list. */
export function toolhiveViolations(schema: unknown, body: unknown): string[] {
	const validate = ajv.compile(schema as object);
	return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
}
