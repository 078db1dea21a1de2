/**
 * The layering of docs/architecture.md, checked on the real files: every import (static,
 * dynamic, `export … from`) of protocol/, server/ and extension/src is read with TypeScript's
 * own pre-processor and resolved to a file, and the rules below hold on that graph.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

interface Edge {
	/** Importing file, relative to the repository (`server/proxy/main.ts`). */
	readonly from: string;
	/** The imported file relative to the repository, or the bare specifier of a package (`zod`). */
	readonly to: string;
	readonly specifier: string;
}

function sourceFiles(folder: string): string[] {
	const files: string[] = [];
	for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
		const path = join(folder, entry.name);
		if (entry.isDirectory()) {
			if (entry.name !== 'node_modules') files.push(...sourceFiles(path));
		} else if (/\.(m?ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
			files.push(path);
		}
	}
	return files;
}

function importsOf(file: string): Edge[] {
	const text = readFileSync(join(ROOT, file), 'utf8');
	return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName: specifier }) => {
		if (!specifier.startsWith('.')) return { from: file, to: specifier, specifier };
		const target = relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts');
		return { from: file, to: target, specifier };
	});
}

const EDGES = ['protocol', 'server', 'extension/src'].flatMap(sourceFiles).flatMap(importsOf);

const under = (folder: string) => (path: string) => path === folder || path.startsWith(`${folder}/`);
const describeEdge = (edge: Edge) => `${edge.from} imports ${edge.specifier}`;

/** Edges from files under `from` to files under `to`. */
function crossing(from: string, to: string): string[] {
	return EDGES.filter((edge) => under(from)(edge.from) && under(to)(edge.to)).map(describeEdge);
}

/** `server/<folder>` for a file in a folder of server/, `server/<file>` for a file at its top. */
function serverNode(path: string): string | undefined {
	const match = /^server\/([^/]+)/.exec(path);
	return match ? `server/${match[1]!.replace(/\.ts$/, '')}` : undefined;
}

/** A cycle in the graph of server/'s folders, as the list of its nodes, or undefined. */
function folderCycle(): string[] | undefined {
	const graph = new Map<string, Set<string>>();
	for (const edge of EDGES) {
		const [from, to] = [serverNode(edge.from), serverNode(edge.to)];
		if (!from || !to || from === to) continue;
		graph.set(from, (graph.get(from) ?? new Set()).add(to));
	}
	const state = new Map<string, 'open' | 'done'>();
	const path: string[] = [];
	const visit = (node: string): string[] | undefined => {
		if (state.get(node) === 'done') return undefined;
		if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
		state.set(node, 'open');
		path.push(node);
		for (const next of graph.get(node) ?? []) {
			const cycle = visit(next);
			if (cycle) return cycle;
		}
		path.pop();
		state.set(node, 'done');
		return undefined;
	};
	for (const node of graph.keys()) {
		const cycle = visit(node);
		if (cycle) return cycle;
	}
	return undefined;
}

/** The doors: they call services, nothing below calls them. */
const DOORS = ['server/rpc', 'server/rest', 'server/cli'];

describe('the layering', () => {
	it('reads the real import graph', () => {
		// A guard for the guard: an empty or unresolved graph would make every rule below pass.
		expect(EDGES.length).toBeGreaterThan(500);
		expect(EDGES).toContainEqual(expect.objectContaining({ from: 'server/proxy/main.ts', to: 'server/runspec/store.ts' }));
	});

	it('protocol/ imports nothing from server/ or the extension', () => {
		expect([...crossing('protocol', 'server'), ...crossing('protocol', 'extension')]).toEqual([]);
	});

	it('extension/src imports only protocol/, its own files, vscode and npm packages', () => {
		const outside = EDGES.filter((edge) => under('extension/src')(edge.from) && edge.specifier.startsWith('.'))
			.filter((edge) => !under('extension/src')(edge.to) && !under('protocol')(edge.to))
			.map(describeEdge);
		expect(outside).toEqual([]);
	});

	it('nothing below the doors imports rpc/, rest/ or cli/', () => {
		const upward = EDGES.filter((edge) => {
			const from = serverNode(edge.from);
			const to = serverNode(edge.to);
			return from && to && !DOORS.includes(from) && DOORS.includes(to);
		}).map(describeEdge);
		expect(upward).toEqual([]);
	});

	it('proxy/ and workloads/ never import each other: they meet in runspec/', () => {
		expect([...crossing('server/proxy', 'server/workloads'), ...crossing('server/workloads', 'server/proxy')]).toEqual([]);
	});

	it('runspec/, net/, runtime/ and store/ import no service, door or the proxy', () => {
		const low = ['server/runspec', 'server/net', 'server/runtime', 'server/store'];
		const high = ['server/clients', 'server/groups', 'server/registry', 'server/secrets', 'server/skills', 'server/workloads', 'server/oci', 'server/proxy', ...DOORS];
		expect(low.flatMap((from) => high.flatMap((to) => crossing(from, to)))).toEqual([]);
	});

	it('the folders of server/ import each other without a cycle', () => {
		expect(folderCycle()).toBeUndefined();
	});
});
