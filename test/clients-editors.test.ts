/**
 * Config edits on layouts users really have: CRLF line endings, tabs, files without a final
 * newline, one-line JSON, unindented YAML lists, TOML sub-tables. Adding entries and taking
 * them away again must give back the user's file byte-for-byte; what cannot be edited
 * safely is refused rather than rewritten.
 */
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { reconcile } from '../server/clients/reconcile.js';
import { clientDefinition } from '../server/clients/table.js';
import type { WorkloadEndpoint } from '../server/clients/workloads.js';

const fetch: WorkloadEndpoint = {
	name: 'fetch',
	group: 'default',
	url: 'http://127.0.0.1:40001/mcp',
	transport: 'streamable-http',
};
const dotted: WorkloadEndpoint = {
	name: 'my.server',
	group: 'default',
	url: 'http://127.0.0.1:40002/sse#my.server',
	transport: 'sse',
};

function shapeOf(client: string) {
	return clientDefinition(client)!.config;
}

/** Adds both workloads, then removes them: returns the text in between and at the end. */
async function addThenRemove(client: string, original: string) {
	const added = await reconcile(original, shapeOf(client), [fetch, dotted], new Set());
	expect(added.managed).toEqual(['fetch', 'my.server']);
	const removed = await reconcile(added.text, shapeOf(client), [], new Set(added.managed));
	return { added: added.text, removed: removed.text };
}

describe('JSON', () => {
	it.each([
		['CRLF line endings', '{\r\n  "theme": "dark",\r\n  "mcpServers": {\r\n    "mine": { "command": "x" }\r\n  }\r\n}\r\n'],
		['tabs', '{\n\t"mcpServers": {\n\t\t"mine": {\n\t\t\t"command": "x"\n\t\t}\n\t}\n}\n'],
		['no final newline', '{\n    "mcpServers": {\n        "mine": {}\n    }\n}'],
		['trailing commas and comments', '{\n  /* block */\n  "mcpServers": {\n    "mine": {}, // mine\n  },\n}\n'],
		['an entry the user commented out', '{\n  "mcpServers": {\n    "mine": {}\n    // "old": {}\n  }\n}\n'],
	])('%s: round trip is byte-for-byte', async (_, original) => {
		const { added, removed } = await addThenRemove('cursor', original);
		const servers = parseJsonc(added, [], { allowTrailingComma: true }).mcpServers;
		expect(servers.fetch).toEqual({ url: fetch.url, type: 'http' });
		expect(servers['my.server']).toEqual({ url: dotted.url, type: 'sse' });
		if (original.includes('\r\n')) expect(added.replaceAll('\r\n', '')).not.toContain('\n');
		if (original.includes('\t')) expect(added).toMatch(/^\t\t"fetch": \{$/m);
		expect(removed).toBe(original);
	});

	it('one-line JSON stays valid and keeps every key', async () => {
		const original = '{"theme":"dark","mcpServers":{"mine":{"command":"x"}},"z":[1]}';
		const { added, removed } = await addThenRemove('cursor', original);
		expect(JSON.parse(added)).toEqual({
			theme: 'dark',
			mcpServers: {
				mine: { command: 'x' },
				fetch: { url: fetch.url, type: 'http' },
				'my.server': { url: dotted.url, type: 'sse' },
			},
			z: [1],
		});
		expect(JSON.parse(removed)).toEqual(JSON.parse(original));
	});

	it('a flat key with a dot (amp.mcpServers) is one key, not a path', async () => {
		const { added } = await addThenRemove('amp-cli', '{ "amp": { "other": 1 } }\n');
		expect(JSON.parse(added)).toEqual({
			amp: { other: 1 },
			'amp.mcpServers': expect.objectContaining({ fetch: expect.any(Object) }),
		});
	});

	it('a servers key that is not an object is refused', async () => {
		await expect(reconcile('{ "mcpServers": [] }', shapeOf('cursor'), [fetch], new Set())).rejects.toThrow(
			/"mcpServers" is not an object/,
		);
	});
});

describe('YAML', () => {
	it('Continue with an unindented list, no final newline: round trip is byte-for-byte', async () => {
		const original = 'name: a   # keep spacing\nmcpServers:\n- name: mine\n  command: x\nmodels: [ ]';
		const { added, removed } = await addThenRemove('continue', original);
		expect(added).toContain('\n- name: fetch\n  url: http://127.0.0.1:40001/mcp\n  type: streamable-http\n');
		expect(parseYaml(added).models).toEqual([]);
		expect(removed).toBe(original);
	});

	it('Goose with four-space indentation and flow entries: round trip is byte-for-byte', async () => {
		const original = 'extensions:\n    mine: {name: mine, enabled: false}\n\n# the end\n';
		const { added, removed } = await addThenRemove('goose', original);
		expect(added).toContain('    fetch:\n        name: fetch\n        uri: http://127.0.0.1:40001/mcp\n');
		expect(parseYaml(added).extensions['my.server']).toMatchObject({ uri: dotted.url, type: 'sse' });
		expect(removed).toBe(original);
	});

	it('Goose with an empty flow map is edited through the document, keeping comments', async () => {
		const original = '# my goose\nextensions: {}  # none yet\nGOOSE_MODEL: x\n';
		const { added, removed } = await addThenRemove('goose', original);
		expect(parseYaml(added)).toMatchObject({ GOOSE_MODEL: 'x', extensions: { fetch: { uri: fetch.url } } });
		expect(added).toContain('# my goose');
		expect(parseYaml(removed)).toEqual({ extensions: {}, GOOSE_MODEL: 'x' });
	});

	it('the last entry removed leaves an empty collection, not a null', async () => {
		const { removed } = await addThenRemove('goose', '');
		expect(parseYaml(removed)).toEqual({ extensions: {} });
	});
});

describe('TOML', () => {
	it('Codex with CRLF and sub-tables of its own entries: round trip is byte-for-byte', async () => {
		const original =
			'# codex\r\nmodel = "o3"\r\n\r\n[mcp_servers.mine]\r\ncommand = "x"\r\n\r\n[mcp_servers.mine.env]\r\nA = "1"\r\n';
		const { added, removed } = await addThenRemove('codex', original);
		expect(added.replaceAll('\r\n', '')).not.toContain('\n');
		expect(parseToml(added).mcp_servers).toEqual({
			mine: { command: 'x', env: { A: '1' } },
			fetch: { url: fetch.url },
			'my.server': { url: dotted.url },
		});
		expect(added).toContain('[mcp_servers."my.server"]');
		expect(removed).toBe(original);
	});

	it('removing an entry takes its sub-tables but not the comment above the next table', async () => {
		const managed = new Set(['fetch']);
		const original =
			'a = 1\n\n[mcp_servers.fetch]\nurl = "http://old"\n\n[mcp_servers.fetch.env]\nX = "1"\n\n# about profiles\n[profiles.x]\nmodel = "m"\n';
		const { text } = await reconcile(original, shapeOf('codex'), [], managed);
		expect(text).toBe('a = 1\n\n# about profiles\n[profiles.x]\nmodel = "m"\n');
	});

	it('updates the URL of an entry in place, keeping the fields and comments around it', async () => {
		const original = '[mcp_servers.fetch]\nurl = "http://127.0.0.1:1/mcp"  # port moves\nstartup_timeout_sec = 20\n';
		const { text } = await reconcile(original, shapeOf('codex'), [fetch], new Set(['fetch']));
		expect(text).toBe('[mcp_servers.fetch]\nurl = "http://127.0.0.1:40001/mcp"  # port moves\nstartup_timeout_sec = 20\n');
	});

	it('Mistral Vibe multi-line strings and arrays do not confuse the scanner', async () => {
		const original =
			'prompt = """\n[[mcp_servers]]\nnot a table\n"""\nlist = [\n  "a", # one\n  "b",\n]\n\n[[mcp_servers]]\nname = "mine"\ntransport = "stdio"\n';
		const { added, removed } = await addThenRemove('mistral-vibe', original);
		const servers = parseToml(added).mcp_servers as Record<string, unknown>[];
		expect(servers.map((server) => server.name)).toEqual(['mine', 'fetch', 'my.server']);
		expect(servers[2]).toEqual({ name: 'my.server', url: dotted.url, transport: 'http' });
		expect(removed).toBe(original);
	});

	it('an entry Hangar manages that the user rewrote as an inline table is refused, not rewritten', async () => {
		const original = 'mcp_servers = { fetch = { url = "http://old" } }\n';
		await expect(reconcile(original, shapeOf('codex'), [fetch], new Set(['fetch']))).rejects.toThrow(
			/not written as a \[mcp_servers\.fetch\] table/,
		);
	});

	it('adding beside an inline servers table is refused rather than producing invalid TOML', async () => {
		await expect(reconcile('mcp_servers = { mine = { command = "x" } }\n', shapeOf('codex'), [fetch], new Set())).rejects.toThrow(
			/would not be valid TOML/,
		);
	});
});

describe('a UTF-8 byte order mark (Notepad, PowerShell 5 `Set-Content -Encoding UTF8`)', () => {
	const files: Array<[client: string, original: string]> = [
		['cursor', '\uFEFF{\r\n  "theme": "dark",\r\n  "mcpServers": {\r\n    "mine": { "command": "x" }\r\n  }\r\n}\r\n'],
		['vscode', '\uFEFF{\r\n  // mine\r\n  "servers": {}\r\n}\r\n'],
		['goose', '\uFEFFextensions:\r\n  mine:\r\n    uri: x\r\n'],
		['codex', '\uFEFFmodel = "o3"\r\n'],
	];
	it.each(files)('%s: kept in front, with CRLF, and the round trip is byte-for-byte', async (client, original) => {
		const { added, removed } = await addThenRemove(client, original);
		expect(added.startsWith('\uFEFF')).toBe(true);
		expect(added.slice(1)).not.toContain('\uFEFF');
		expect(added.replaceAll('\r\n', '')).not.toContain('\n');
		expect(added).toContain('127.0.0.1:40001');
		expect(removed).toBe(original);
	});
});
