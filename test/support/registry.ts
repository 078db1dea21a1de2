/**
 * Real OCI registries for tests: CNCF distribution (`docker-registry` from Debian) on a free
 * 127.0.0.1 port with its own storage, open or behind token auth. The token service is a
 * small jose-signed endpoint, as distribution's token spec describes: RS256 JWTs whose header
 * carries the certificate (`x5c`) that the registry trusts, and whose `access` claim lists the
 * repository actions granted.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importPKCS8, SignJWT } from 'jose';

export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createNetServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}

export interface TokenRequest {
	readonly user?: string;
	readonly scope: string;
	readonly service: string;
}

export interface TokenServer {
	readonly realm: string;
	readonly service: string;
	readonly issuer: string;
	readonly certPath: string;
	/** Every token request, in order. */
	readonly requests: TokenRequest[];
	stop(): Promise<void>;
}

export interface TokenServerOptions {
	/** user → password accepted with Basic credentials. */
	readonly users?: Record<string, string>;
	/** Actions granted to anonymous callers (default: pull). */
	readonly anonymous?: readonly string[];
	/** Token lifetime in seconds (default 300). */
	readonly expiresIn?: number;
}

export async function startTokenServer(options: TokenServerOptions = {}): Promise<TokenServer> {
	const folder = await mkdtemp(join(tmpdir(), 'hangar-token-'));
	const keyPath = join(folder, 'key.pem');
	const certPath = join(folder, 'cert.pem');
	execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=hangar-test-token'], {
		stdio: 'ignore',
	});
	const key = await importPKCS8(await readFile(keyPath, 'utf8'), 'RS256');
	const certificate = (await readFile(certPath, 'utf8')).replace(/-----[^-]+-----|\s/g, '');
	const service = 'hangar-test-registry';
	const issuer = 'hangar-test-issuer';
	const requests: TokenRequest[] = [];

	const server = createServer(async (request, response) => {
		const url = new URL(request.url ?? '/', 'http://localhost');
		const scope = url.searchParams.get('scope') ?? '';
		const user = basicUser(request, options.users ?? {});
		if (user === null) {
			response.writeHead(401, { 'Content-Type': 'application/json' }).end('{"details":"invalid credentials"}');
			return;
		}
		requests.push({ ...(user && { user }), scope, service: url.searchParams.get('service') ?? '' });
		const [type, name, actions] = scope.split(':');
		const granted = (actions ?? '').split(',').filter((action) => (user ? true : (options.anonymous ?? ['pull']).includes(action)));
		const token = await new SignJWT({ access: type && name ? [{ type, name, actions: granted }] : [] })
			.setProtectedHeader({ alg: 'RS256', typ: 'JWT', x5c: [certificate] })
			.setIssuer(issuer)
			.setAudience(service)
			.setSubject(user ?? '')
			.setIssuedAt()
			.setNotBefore(Math.floor(Date.now() / 1000) - 10)
			.setExpirationTime(`${options.expiresIn ?? 300}s`)
			.setJti(randomUUID())
			.sign(key);
		response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ token, expires_in: options.expiresIn ?? 300 }));
	});
	const port = await listen(server);
	return {
		realm: `http://127.0.0.1:${port}/token`,
		service,
		issuer,
		certPath,
		requests,
		stop: async () => {
			await new Promise((resolve) => server.close(resolve));
			await rm(folder, { recursive: true, force: true });
		},
	};
}

/** The user of valid Basic credentials, undefined without any, null for wrong ones. */
function basicUser(request: IncomingMessage, users: Record<string, string>): string | undefined | null {
	const header = request.headers.authorization;
	if (!header?.startsWith('Basic ')) return undefined;
	const [user, password] = Buffer.from(header.slice(6), 'base64').toString().split(':');
	return user && users[user] === password ? user : null;
}

/** Listens on a free loopback port; resolves with the port. */
export function listen(server: NetServer): Promise<number> {
	return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

export interface Registry {
	/** `127.0.0.1:PORT`, the registry part of references. */
	readonly host: string;
	readonly url: string;
	readonly storage: string;
	readonly token?: TokenServer;
	stop(): Promise<void>;
}

export async function startRegistry(options: { token?: TokenServerOptions } = {}): Promise<Registry> {
	const folder = await mkdtemp(join(tmpdir(), 'hangar-registry-'));
	const storage = join(folder, 'data');
	const token = options.token ? await startTokenServer(options.token) : undefined;
	const port = await freePort();
	const auth = token
		? `auth:\n  token:\n    realm: ${token.realm}\n    service: ${token.service}\n    issuer: ${token.issuer}\n    rootcertbundle: ${token.certPath}\n`
		: '';
	await writeFile(
		join(folder, 'config.yml'),
		`version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n  delete:\n    enabled: true\n` +
			`http:\n  addr: 127.0.0.1:${port}\n  secret: ${randomUUID()}\n${auth}`,
	);
	const child: ChildProcess = spawn('docker-registry', ['serve', join(folder, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
	let output = '';
	child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
	const url = `http://127.0.0.1:${port}`;
	const deadline = Date.now() + 15_000;
	for (;;) {
		const status = await fetch(`${url}/v2/`).then((response) => response.status, () => 0);
		if (status === 200 || status === 401) break;
		if (child.exitCode !== null || Date.now() > deadline) throw new Error(`docker-registry did not start: ${output}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	return {
		host: `127.0.0.1:${port}`,
		url,
		storage,
		...(token && { token }),
		stop: async () => {
			if (child.exitCode === null) {
				child.kill();
				await new Promise((resolve) => child.once('exit', resolve));
			}
			await token?.stop();
			await rm(folder, { recursive: true, force: true });
		},
	};
}
