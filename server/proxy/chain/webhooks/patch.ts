/**
 * A mutating webhook's JSON Patch (RFC 6902), applied to a call's `arguments` only: `add`,
 * `remove`, `replace` and `test`, with paths under `/mcp_request/params/arguments` (ToolHive's
 * patches address the body's `mcp_request`). A patch that reaches anything
 * else (the tool's name, the method, a resource's URI) or uses another operation is refused
 * whole, so a webhook can neither rename the call to a tool the client cannot see nor turn it
 * into another request. Small enough not to need a library.
 */

export class PatchRefused extends Error {
	override readonly name = 'PatchRefused';
}

interface Operation {
	readonly op: string;
	readonly path: string;
	readonly value?: unknown;
}

/** Where the call's params are in the body a webhook patches. */
const PARAMS = '/mcp_request/params';

/** The tokens of a path from the params on (`arguments`, …). */
function tokensOf(path: unknown): string[] {
	if (typeof path !== 'string' || !(path === `${PARAMS}/arguments` || path.startsWith(`${PARAMS}/arguments/`))) {
		throw new PatchRefused(`the patch may change only ${PARAMS}/arguments, not ${JSON.stringify(path)}`);
	}
	return path.slice(PARAMS.length).split('/').slice(1).map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `params` with `patch` applied to its arguments; throws PatchRefused for a patch it will not apply. */
export function patchArguments(params: Record<string, unknown>, patch: unknown): Record<string, unknown> {
	if (!Array.isArray(patch)) throw new PatchRefused('the patch is not a JSON Patch array');
	const patched = structuredClone(params);
	for (const operation of patch as Operation[]) {
		if (operation === null || typeof operation !== 'object') throw new PatchRefused('a patch operation is not an object');
		const tokens = tokensOf(operation.path);
		if (tokens.length < 2 && operation.op !== 'test' && operation.op !== 'replace') throw new PatchRefused('the patch may not add or remove /arguments itself');
		const last = tokens[tokens.length - 1]!;
		let parent: any = patched;
		for (const token of tokens.slice(0, -1)) {
			parent = parent?.[Array.isArray(parent) && token === '-' ? parent.length : token];
			if (parent === null || typeof parent !== 'object') throw new PatchRefused(`${operation.path} does not exist`);
		}
		const index = Array.isArray(parent) ? (last === '-' ? parent.length : Number(last)) : undefined;
		if (index !== undefined && !(Number.isInteger(index) && index >= 0 && index <= parent.length)) throw new PatchRefused(`${operation.path} is not an index of its array`);
		const exists = index !== undefined ? index < parent.length : Object.hasOwn(parent, last);
		switch (operation.op) {
			case 'add':
				if (index !== undefined) parent.splice(index, 0, structuredClone(operation.value));
				else parent[last] = structuredClone(operation.value);
				break;
			case 'remove':
			case 'replace':
				if (!exists) throw new PatchRefused(`${operation.path} does not exist`);
				if (operation.op === 'remove') {
					if (index !== undefined) parent.splice(index, 1);
					else delete parent[last];
				} else parent[index ?? last] = structuredClone(operation.value);
				break;
			case 'test':
				if (!exists || JSON.stringify(parent[index ?? last]) !== JSON.stringify(operation.value)) throw new PatchRefused(`the test of ${operation.path} failed`);
				break;
			default:
				throw new PatchRefused(`the patch operation ${JSON.stringify(operation.op)} is not one Hangar applies (add, remove, replace, test)`);
		}
	}
	return patched;
}
