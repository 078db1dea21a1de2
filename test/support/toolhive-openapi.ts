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

interface SchemaNode {
	$ref?: string;
	allOf?: SchemaNode[];
	type?: string;
	items?: SchemaNode;
	properties?: Record<string, SchemaNode>;
}

/**
 * A body of ToolHive's request schema `name` (`pkg_api_v1.createRequest`…) that sets every field
 * it defines, at every depth; the values are only of the right JSON type.
 */
export function toolhiveRequestWithEveryField(name: string): Record<string, unknown> {
	const schemas = (document.components as { schemas: Record<string, SchemaNode> }).schemas;
	const resolve = (node: SchemaNode): SchemaNode => {
		if (node.$ref) return resolve(schemas[node.$ref.split('/').pop()!]!);
		return node.allOf?.length === 1 ? resolve(node.allOf[0]!) : node;
	};
	const example = (node: SchemaNode): unknown => {
		const schema = resolve(node);
		if (schema.properties) return Object.fromEntries(Object.entries(schema.properties).map(([key, value]) => [key, example(value)]));
		if (schema.type === 'array') return schema.items ? [example(schema.items)] : [];
		return { string: 'x', integer: 1, number: 1, boolean: true }[schema.type ?? ''] ?? {};
	};
	return example(schemas[name]!) as Record<string, unknown>;
}
