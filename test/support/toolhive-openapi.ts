/**
 * Validates Hangar's REST responses against ToolHive's own OpenAPI document, read from
 * ../shared: what ToolHive clients parse, Hangar must answer.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { HANGAR_CLIENT_APPS } from '../../protocol/common.js';

const DOCUMENT_PATH = fileURLToPath(new URL('../../../shared/reference/data/toolhive-openapi.json', import.meta.url));

interface OpenApi {
	paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
	components: unknown;
}

const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as OpenApi;
const CLIENT_APP_SCHEMA = 'github_com_stacklok_toolhive_pkg_client.ClientApp';

/** ToolHive's own client ids, in its order. */
export const TOOLHIVE_CLIENT_IDS: readonly string[] = [...schemaOf(CLIENT_APP_SCHEMA).enum!];
// Hangar's documented extension ids (`HANGAR_CLIENT_APPS`) are answered too: ToolHive's enum plus exactly those.
schemaOf(CLIENT_APP_SCHEMA).enum!.push(...HANGAR_CLIENT_APPS);

function schemaOf(name: string): { enum?: string[] } {
	return (document.components as { schemas: Record<string, { enum?: string[] }> }).schemas[name]!;
}
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
