/**
 * The OpenAPI 3.1 document of the REST door, generated from the operation table: the same
 * zod schemas that validate requests describe them here, so the document cannot drift.
 */
import { z } from 'zod';
import { pathParams } from '../../protocol/operation.js';
import { VERSION } from '../version.js';
const ERROR_SCHEMA = {
    type: 'object',
    properties: { code: { type: 'string' }, message: { type: 'string' } },
    required: ['code', 'message'],
};
function jsonSchema(schema, io) {
    const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
    return rest;
}
function operationObject(row) {
    const params = jsonSchema(row.params, 'input');
    const inPath = new Set(pathParams(row.rest.path));
    const inQuery = new Set(row.rest.query ?? []);
    const required = new Set(params.required ?? []);
    const parameters = [];
    const bodyProperties = {};
    for (const [name, schema] of Object.entries(params.properties ?? {})) {
        if (inPath.has(name))
            parameters.push({ name, in: 'path', required: true, schema });
        else if (inQuery.has(name))
            parameters.push({ name, in: 'query', required: required.has(name), schema });
        else
            bodyProperties[name] = schema;
    }
    const operation = {
        operationId: row.method,
        summary: row.summary,
        tags: [row.method.split('/')[0]],
        parameters,
        responses: Object.fromEntries([
            [String(row.rest.status), successResponse(row)],
            ...row.errors.map((status) => [
                String(status),
                { description: 'Error', content: { 'application/json': { schema: ERROR_SCHEMA } } },
            ]),
        ]),
    };
    if (row.rest.verb !== 'GET' && Object.keys(bodyProperties).length > 0) {
        const bodyRequired = [...required].filter((name) => name in bodyProperties);
        operation.requestBody = {
            required: bodyRequired.length > 0,
            content: {
                'application/json': {
                    schema: { type: 'object', properties: bodyProperties, ...(bodyRequired.length ? { required: bodyRequired } : {}) },
                    example: Object.fromEntries(Object.entries(row.example).filter(([name]) => name in bodyProperties)),
                },
            },
        };
    }
    return operation;
}
function successResponse(row) {
    const { status, response = 'json' } = row.rest;
    if (status === 204 || response === 'empty')
        return { description: 'Success, no body' };
    const mediaType = response === 'text' ? 'text/plain' : 'application/json';
    return { description: 'Success', content: { [mediaType]: { schema: jsonSchema(row.result, 'output') } } };
}
export function openApiDocument(rows) {
    const paths = {};
    for (const row of rows) {
        const item = (paths[row.rest.path] ??= {});
        item[row.rest.verb.toLowerCase()] = operationObject(row);
    }
    return {
        openapi: '3.1.0',
        info: {
            title: 'Hangar API',
            version: VERSION,
            description: "Hangar's management API, on ToolHive-compatible paths. Every operation is also a JSON-RPC method of `hangar daemon`.",
        },
        paths,
    };
}
//# sourceMappingURL=openapi.js.map