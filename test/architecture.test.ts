/**
 * The import rules of docs/architecture.md, read from the source itself: every static import,
 * re-export and dynamic `import()` of every TypeScript file is resolved to the file it names,
 * and the arrows between folders, and between files, are checked.
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
const proxy = server.filter(({ from }) => from.startsWith('server/proxy/'));
/** Every import between modules of the source: the server, the contract and the extension. */
const modules = [...server, ...arrowsOf('protocol', 'extension/src')];
const proxyFiles = sources('server/proxy').map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

/**
 * Cycles of `arrows`, each as `a → b → a`, the nodes being what `node` makes of a file (its
 * folder, or the file itself). Where there is a cycle, at least one is reported; another through
 * the same files may show once that one is broken.
 */
function cyclesOf(arrows: readonly Arrow[], node: (file: string) => string): string[] {
	const edges = new Map<string, Set<string>>();
	for (const { from, to } of arrows) {
		const [a, b] = [node(from), node(to)];
		if (a !== b) (edges.get(a) ?? edges.set(a, new Set()).get(a)!).add(b);
	}
	const cycles: string[] = [];
	const state = new Map<string, 'open' | 'done'>();
	const visit = (at: string, path: string[]) => {
		if (state.get(at) === 'done') return;
		if (state.get(at) === 'open') return void cycles.push([...path.slice(path.indexOf(at)), at].join(' → '));
		state.set(at, 'open');
		for (const next of edges.get(at) ?? []) visit(next, [...path, at]);
		state.set(at, 'done');
	};
	for (const at of edges.keys()) visit(at, []);
	return cycles;
}

/**
 * The proxy's stages, in the order a request passes them (docs/architecture.md): each imports
 * only stages after it. `core/` and `net/` are the ground every stage may import; they import
 * no stage.
 */
const STAGES = ['fronts', 'sessions', 'chain', 'backends'];
const GROUND = ['core', 'net'];

/** The stage of a file of server/proxy (its folder there, or the file itself at the root). */
function stageOf(file: string): string {
	const parts = file.split('/');
	if (parts[0] !== 'server' || parts[1] !== 'proxy') return nodeOf(file);
	return parts.length > 3 ? `server/proxy/${parts[2]}` : file;
}

const stageName = (file: string) => stageOf(file).replace(/^server\/proxy\//, '');

/** Arrows of server/proxy that break its stage rules, each with the rule it breaks. */
function stageViolations(arrows: readonly Arrow[]): string[] {
	const broken: string[] = [];
	for (const arrow of arrows) {
		const { from, to } = arrow;
		if (!from.startsWith('server/proxy/') || !to.startsWith('server/proxy/')) continue;
		const [a, b] = [stageName(from), stageName(to)];
		if (a === b) continue;
		const say = (rule: string) => broken.push(`${describeArrow(arrow)}: ${rule}`);
		if (b === 'main.ts') say('nothing imports the entry');
		else if (b === 'scale' && a !== 'main.ts') say('scale/ is reached from main.ts only');
		else if (b === 'revisions' && a !== 'fronts' && from !== 'server/proxy/backends/http.ts') say('revisions/ is reached from the fronts and the HTTP backend only');
		else if (GROUND.includes(a) && !GROUND.includes(b)) say('core/ and net/ import no stage');
		else if (a === 'revisions' && !['sessions', 'chain', ...GROUND].includes(b)) say('revisions/ imports only sessions/, chain/ and the ground');
		else if (STAGES.includes(a) && STAGES.includes(b) && STAGES.indexOf(b) < STAGES.indexOf(a)) say(`${a}/ is after ${b}/: no import back up`);
	}
	return broken;
}

/** Fields and variables of server/proxy that are a Map keyed by request id (per-call state goes in a CallTable). */
function requestIdMaps(files: ReadonlyArray<{ readonly file: string; readonly text: string }>): string[] {
	return files.flatMap(({ file, text }) => [...text.matchAll(/\bMap<\s*RequestId\b/g)].map((match) => `${file}: ${match[0]}`));
}

/**
 * Places in server/proxy that read a stream chunk by chunk. Bodies are read by net/body.ts; the
 * HTTP backend keeps its streaming reader of server-sent events, and HAProxy's check its stderr.
 */
const CHUNK_READERS: Readonly<Record<string, number>> = { 'server/proxy/backends/http.ts': 1, 'server/proxy/scale/haproxy.ts': 1 };

function bodyReaders(files: ReadonlyArray<{ readonly file: string; readonly text: string }>): string[] {
	return files
		.map(({ file, text }) => ({ file, count: [...text.matchAll(/\.on\(\s*'data'|for await \(const chunk\b|Buffer\.concat\(/g)].length }))
		.filter(({ file, count }) => count > (CHUNK_READERS[file] ?? 0))
		.map(({ file, count }) => `${file}: ${count}`);
}

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

	it('no cycle between folders of server/, nor between the stages of server/proxy', () => {
		expect(cyclesOf(server, nodeOf)).toEqual([]);
		expect(cyclesOf(proxy, stageOf)).toEqual([]);
	});

	// Type-only imports count: a module that names another's types depends on it as much, and
	// the shared type belongs below both (a small types module, or an interface the lower one owns).
	it('no cycle between modules: no file imports, by any path, one that imports it back', () => {
		expect(cyclesOf(modules, (file) => file)).toEqual([]);
	});

	it('the cycle check finds a planted cycle', () => {
		const planted = [...proxy, { from: 'server/proxy/core/jsonrpc.ts', to: 'server/proxy/fronts/http.ts' }];
		expect(cyclesOf(planted, stageOf)).not.toEqual([]);
		expect(cyclesOf([...server, { from: 'server/net/body.ts', to: 'server/proxy/main.ts' }], nodeOf)).not.toEqual([]);
		// The cycle the client config editors had: a format editor importing the module that loads it.
		expect(cyclesOf([...modules, { from: 'server/clients/jsonEditor.ts', to: 'server/clients/editor.ts' }], (file) => file)).toEqual([
			'server/clients/editor.ts → server/clients/jsonEditor.ts → server/clients/editor.ts',
		]);
	});
});

describe('the proxy\'s stages (server/proxy)', () => {
	it('the stages are there and read', () => {
		expect(proxy).toContainEqual({ from: 'server/proxy/fronts/streamable.ts', to: 'server/proxy/revisions/client2026.ts' });
		expect(new Set(proxy.map(({ from }) => stageName(from)))).toEqual(new Set(['main.ts', ...STAGES, 'revisions', 'scale', ...GROUND]));
	});

	it('import only downward: fronts → sessions → chain → backends; revisions from the fronts and the HTTP backend; scale from main.ts', () => {
		expect(stageViolations(proxy)).toEqual([]);
	});

	it('each stage rule catches a planted arrow', () => {
		const planted: Arrow[] = [
			{ from: 'server/proxy/backends/stdio.ts', to: 'server/proxy/chain/chain.ts' },
			{ from: 'server/proxy/chain/chain.ts', to: 'server/proxy/sessions/clientSession.ts' },
			{ from: 'server/proxy/sessions/clientSession.ts', to: 'server/proxy/fronts/http.ts' },
			{ from: 'server/proxy/backends/spread.ts', to: 'server/proxy/revisions/server2026.ts' },
			{ from: 'server/proxy/sessions/clientSession.ts', to: 'server/proxy/scale/replicas.ts' },
			{ from: 'server/proxy/core/backend.ts', to: 'server/proxy/backends/http.ts' },
			{ from: 'server/proxy/revisions/server2026.ts', to: 'server/proxy/backends/stdio.ts' },
			{ from: 'server/proxy/fronts/server.ts', to: 'server/proxy/main.ts' },
		];
		for (const arrow of planted) expect(stageViolations([arrow]), describeArrow(arrow)).toHaveLength(1);
	});

	it('no Map keyed by request id (per-call state lives in a CallTable)', () => {
		expect(requestIdMaps(proxyFiles)).toEqual([]);
		expect(requestIdMaps([{ file: 'planted.ts', text: 'private readonly pending = new Map<RequestId, () => void>();' }])).toHaveLength(1);
	});

	it('one body reader: nothing in the proxy reads a body chunk by chunk but net/body.ts', () => {
		expect(bodyReaders(proxyFiles)).toEqual([]);
		const planted = "for await (const chunk of request) text += chunk;";
		expect(bodyReaders([{ file: 'server/proxy/fronts/planted.ts', text: planted }])).toHaveLength(1);
		expect(bodyReaders([{ file: 'server/proxy/backends/http.ts', text: `${planted}\nrequest.on('data', push);` }])).toHaveLength(1);
	});
});
