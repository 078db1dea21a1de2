/**
 * The import rules of docs/architecture.md, read from the source itself: every static import,
 * re-export and dynamic `import()` of every TypeScript file is resolved to the file it names,
 * and the arrows between folders are checked.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

interface Arrow {
	readonly from: string;
	readonly to: string;
}

function sources(folder: string): string[] {
	return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
		.filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
		.map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** Every relative import of the files under `folders`, as repository paths (`.js` read as `.ts`). */
function arrowsOf(...folders: string[]): Arrow[] {
	const arrows: Arrow[] = [];
	for (const file of folders.flatMap(sources)) {
		const text = readFileSync(join(ROOT, file), 'utf8');
		for (const match of text.matchAll(IMPORT)) {
			const specifier = match[1] ?? match[2] ?? match[3]!;
			if (!specifier.startsWith('.')) continue;
			arrows.push({ from: file, to: relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts') });
		}
	}
	return arrows;
}

/** The node of a file in the folder graph: its folder under server/, or the file itself for server's top-level files. */
function nodeOf(file: string): string {
	const parts = file.split('/');
	if (parts[0] !== 'server') return parts[0]!;
	return parts.length > 2 ? `server/${parts[1]}` : file;
}

const describeArrow = ({ from, to }: Arrow) => `${from} → ${to}`;
const server = arrowsOf('server');

describe('the import rules', () => {
	it('the arrows are read at all (the rules below would pass on nothing)', () => {
		expect(server.length).toBeGreaterThan(300);
		expect(server).toContainEqual({ from: 'server/proxy/main.ts', to: 'server/runspec/store.ts' });
	});

	it('protocol/ imports nothing from server/ or the extension', () => {
		expect(arrowsOf('protocol').filter(({ to }) => !to.startsWith('protocol/')).map(describeArrow)).toEqual([]);
	});

	it('the extension imports only protocol/ besides its own files', () => {
		const outside = arrowsOf('extension/src').filter(({ to }) => !to.startsWith('extension/src/') && !to.startsWith('protocol/'));
		expect(outside.map(describeArrow)).toEqual([]);
	});

	it('nothing below the doors imports a door (rpc/, rest/, cli/)', () => {
		const doors = ['server/rpc', 'server/rest', 'server/cli'];
		const upward = server.filter(({ from, to }) => !doors.includes(nodeOf(from)) && doors.includes(nodeOf(to)) && !from.startsWith('server/cli/'));
		// server/services.ts wires the services and is itself below the doors.
		expect(upward.map(describeArrow)).toEqual([]);
	});

	it('proxy/ and workloads/ meet only through runspec/', () => {
		const crossing = server.filter(
			({ from, to }) => (nodeOf(from) === 'server/proxy' && nodeOf(to) === 'server/workloads') || (nodeOf(from) === 'server/workloads' && nodeOf(to) === 'server/proxy'),
		);
		expect(crossing.map(describeArrow)).toEqual([]);
	});

	it('runspec/, net/, runtime/ and store/ import no service, door or the proxy', () => {
		const ground = ['server/runspec', 'server/net', 'server/runtime', 'server/store'];
		const upward = server.filter(({ from, to }) => ground.includes(nodeOf(from)) && nodeOf(to).startsWith('server/') && !ground.includes(nodeOf(to)) && to.includes('/', 'server/'.length));
		expect(upward.map(describeArrow)).toEqual([]);
	});

	it('no cycle between folders of server/', () => {
		const edges = new Map<string, Set<string>>();
		for (const { from, to } of server) {
			const [a, b] = [nodeOf(from), nodeOf(to)];
			if (a !== b && b.startsWith('server/')) (edges.get(a) ?? edges.set(a, new Set()).get(a)!).add(b);
		}
		const cycles: string[] = [];
		const state = new Map<string, 'open' | 'done'>();
		const visit = (node: string, path: string[]) => {
			if (state.get(node) === 'done') return;
			if (state.get(node) === 'open') return void cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
			state.set(node, 'open');
			for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
			state.set(node, 'done');
		};
		for (const node of edges.keys()) visit(node, []);
		expect(cycles).toEqual([]);
	});
});
