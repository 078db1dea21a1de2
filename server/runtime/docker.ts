/**
 * The Docker Engine runtime, over dockerode (imported on first use so the daemon starts
 * fast), but for the calls a workload's proxy makes (`engineApi.ts`, over node:http). It speaks to any engine with Docker's API: Docker, and Podman's Docker-compatible
 * service. The engine is found as `engines.ts` says (`DOCKER_HOST`, the Docker context, the
 * sockets of Docker, Docker Desktop, Colima, Rancher Desktop and Podman).
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { HangarError } from '../../protocol/errors.js';
import type { Progress } from '../context.js';
import { httpEngine, modemEngine, type EngineApi } from './engineApi.js';
import { findEngine, pipePathOf, type EngineAddress } from './engines.js';
import type { Attachment, ContainerInfo, ContainerSpec, ContainerState, Endpoint, ImageBuild, LogOptions, Runtime, RuntimeInfo } from './runtime.js';

/** Lines of a failed build's output its error carries. */
const BUILD_TAIL_LINES = 15;

/** How often a container's removal is tried while Podman reports it mid-exit. */
const REMOVE_ATTEMPTS = 5;

/** Engine errors that mean "nobody answers at the socket". */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'EPERM', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOTFOUND']);

interface EngineError extends Error {
	statusCode?: number;
	code?: string;
	json?: { message?: string } | null;
}

export class DockerRuntime implements Runtime {
	private docker: Promise<Dockerode> | undefined;
	private engineApi: Promise<EngineApi> | undefined;
	private found: EngineAddress | undefined;

	constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

	/** Where the engine is, and how it was found. */
	get engine(): EngineAddress {
		return (this.found ??= findEngine(this.env));
	}

	/** Where the engine is expected, for error messages. */
	get address(): string {
		return `${this.engine.host} (${this.engine.foundBy})`;
	}

	private client(): Promise<Dockerode> {
		return (this.docker ??= import('dockerode').then(({ default: Docker }) => new Docker(engineOptions(this.engine.host, this.env))));
	}

	/**
	 * The proxy's calls, and the CLI's everyday reads (version, list): over node:http, unless the
	 * engine is reached over SSH (dockerode's transport).
	 */
	private api(): Promise<EngineApi> {
		if (!this.engineApi) {
			const options = engineOptions(this.engine.host, this.env);
			this.engineApi = options.protocol === 'ssh' ? this.client().then(modemEngine) : Promise.resolve(httpEngine(options));
		}
		return this.engineApi;
	}

	/** Runs an engine call, turning transport failures into 503 and engine statuses into HangarErrors. */
	private async call<T>(what: string, work: (docker: Dockerode) => Promise<T>): Promise<T> {
		return this.attempt(what, async () => work(await this.client()));
	}

	/** `call` for the calls `engineApi.ts` makes. */
	private async request<T>(what: string, work: (api: EngineApi) => Promise<T>): Promise<T> {
		return this.attempt(what, async () => work(await this.api()));
	}

	private async attempt<T>(what: string, work: () => Promise<T>): Promise<T> {
		try {
			return await work();
		} catch (error) {
			throw this.translate(what, error);
		}
	}

	private translate(what: string, error: unknown): unknown {
		if (error instanceof HangarError) return error;
		const failure = error as EngineError;
		if (failure.code && UNREACHABLE.has(failure.code)) {
			return new HangarError(
				503,
				`no container runtime answers at ${this.address}: ${failure.code}; start Docker (or Podman's service), or set DOCKER_HOST`,
				'runtime_unavailable',
				{ cause: error },
			);
		}
		const detail = engineMessage(failure);
		if (failure.statusCode === 404) return new HangarError(404, `${what}: ${detail}`, 'not_found', { cause: error });
		if (failure.statusCode === 409) return new HangarError(409, `${what}: ${detail}`, 'conflict', { cause: error });
		return new HangarError(500, `${what}: ${detail}`, 'runtime_error', { cause: error });
	}

	async info(): Promise<RuntimeInfo> {
		const named = await this.request('container runtime version', async (api) => engineNamedBy(await api.pingHeaders()) ?? engineOfVersion(await api.json<Dockerode.DockerVersion>('GET', '/version')));
		return { ...named, address: this.engine.host, found_by: this.engine.foundBy };
	}

	async imageExists(image: string): Promise<boolean> {
		try {
			await this.call(`image ${image}`, (docker) => docker.getImage(image).inspect());
			return true;
		} catch (error) {
			if (error instanceof HangarError && error.status === 404) return false;
			throw error;
		}
	}

	async imageLabels(image: string): Promise<Readonly<Record<string, string>>> {
		const inspected = await this.call(`image ${image}`, (docker) => docker.getImage(image).inspect());
		return (inspected.Config?.Labels as Record<string, string> | null | undefined) ?? {};
	}

	async pullImage(image: string, progress: Progress, signal: AbortSignal): Promise<void> {
		const docker = await this.client();
		progress.report(`pulling ${image}`);
		try {
			const stream = await docker.pull(image, { abortSignal: signal });
			await new Promise<void>((resolve, reject) => {
				docker.modem.followProgress(
					stream,
					(error: Error | null) => (error ? reject(error) : resolve()),
					(event: { status?: string; id?: string; progress?: string }) => {
						if (event.status) progress.report(`${event.id ? `${event.id}: ` : ''}${event.status}${event.progress ? ` ${event.progress}` : ''}`);
					},
				);
			});
		} catch (error) {
			if (signal.aborted) throw HangarError.cancelled(`pull of ${image}`);
			const translated = this.translate(`pull ${image}`, error);
			if (translated instanceof HangarError && translated.status === 503) throw translated;
			// An unknown image and an unreachable registry look alike from here: either way the
			// image cannot be had, which is what the caller needs to know.
			throw new HangarError(404, `image ${image} not found: it is not available locally and the pull failed (${engineMessage(error as EngineError)})`, 'image_not_found', {
				cause: error,
			});
		}
	}

	async buildImage(build: ImageBuild, progress: Progress, signal: AbortSignal): Promise<void> {
		const docker = await this.client();
		const lines: string[] = [];
		let step = '';
		let failure: string | undefined;
		const note = (text: string) => {
			for (const line of text.split('\n').map((part) => part.trimEnd()).filter(Boolean)) {
				// Docker's classic builder says `Step 4/7 : RUN …`; Podman's (Buildah) `[1/2] STEP 4/5: RUN …`.
				const started = /^(?:Step|(\[\d+\/\d+\] )?STEP) (\d+\/\d+ ?: .*)$/.exec(line);
				if (started) step = `${started[1] ?? ''}${started[2]}`;
				lines.push(line);
				if (lines.length > BUILD_TAIL_LINES) lines.shift();
				progress.report(line.length > 200 ? `${line.slice(0, 200)}…` : line);
			}
		};
		try {
			const files = await readdir(build.contextDir, { recursive: true, withFileTypes: true });
			const src = files.filter((entry) => !entry.isDirectory()).map((entry) => relative(build.contextDir, join(entry.parentPath, entry.name)));
			const stream = await docker.buildImage({ context: build.contextDir, src }, { t: build.tag, rm: true, forcerm: true, networkmode: build.network, abortSignal: signal });
			await new Promise<void>((resolve, reject) => {
				docker.modem.followProgress(
					stream,
					(error: Error | null) => (error ? reject(error) : resolve()),
					(event: { stream?: string; status?: string; error?: string; errorDetail?: { message?: string } }) => {
						if (event.stream) note(event.stream);
						else if (event.status) note(event.status);
						if (event.error) failure = event.errorDetail?.message ?? event.error;
					},
				);
			});
		} catch (error) {
			if (signal.aborted) throw HangarError.cancelled(`build of ${build.tag}`);
			throw this.translate(`build ${build.tag}`, error);
		}
		if (failure !== undefined) {
			throw new HangarError(422, `the image build failed${step ? ` at step ${step}` : ''}: ${failure.trim()}\nlast lines of the build:\n${lines.join('\n')}`, 'build_failed');
		}
	}

	async create(spec: ContainerSpec): Promise<string> {
		const exposed = spec.publishPort === undefined ? undefined : `${spec.publishPort}/tcp`;
		const container = await this.call(`create container ${spec.name}`, (docker) =>
			docker.createContainer({
				name: spec.name,
				Image: spec.image,
				Cmd: [...spec.args],
				Env: Object.entries(spec.env).map(([key, value]) => `${key}=${value}`),
				Labels: { ...spec.labels },
				OpenStdin: spec.interactive,
				StdinOnce: false,
				AttachStdin: spec.interactive,
				AttachStdout: spec.interactive,
				AttachStderr: spec.interactive,
				Tty: false,
				ExposedPorts: exposed ? { [exposed]: {} } : undefined,
				HostConfig: {
					// Published on loopback only, on a port the engine picks.
					PortBindings: exposed && isDefaultNetwork(spec.network) ? { [exposed]: [{ HostIp: '127.0.0.1', HostPort: '' }] } : undefined,
					Mounts: spec.mounts.map((mount) => ({ Type: 'bind', Source: mount.source, Target: mount.target, ReadOnly: mount.readOnly })),
					NetworkMode: spec.network,
					RestartPolicy: { Name: spec.restartPolicy === 'no' ? '' : spec.restartPolicy },
					SecurityOpt: ['no-new-privileges'],
					// A tiny init as PID 1 forwards signals, so servers stop on SIGTERM instead of after the grace period.
					Init: true,
					LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '2' } },
				},
			}),
		);
		return container.id;
	}

	async start(id: string): Promise<void> {
		await this.request(`start container ${id}`, async (api) => {
			try {
				await api.json('POST', `/containers/${encodeURIComponent(id)}/start`);
			} catch (error) {
				if ((error as EngineError).statusCode !== 304) throw error; // 304: already running
			}
		});
	}

	async stop(id: string, graceSeconds: number): Promise<void> {
		await this.call(`stop container ${id}`, async (docker) => {
			try {
				await docker.getContainer(id).stop({ t: graceSeconds });
			} catch (error) {
				const status = (error as EngineError).statusCode;
				if (status !== 304 && status !== 404) throw error; // already stopped, or gone
			}
		});
	}

	async remove(id: string): Promise<void> {
		await this.call(`remove container ${id}`, async (docker) => {
			for (let attempt = 1; ; attempt++) {
				try {
					await docker.getContainer(id).remove({ force: true, v: true });
					return;
				} catch (error) {
					const failure = error as EngineError;
					if (failure.statusCode === 404) return;
					if (failure.statusCode === 409 && /already in progress/i.test(engineMessage(failure))) return;
					// Podman before 4.4 refuses to force-remove a container that is exiting at that moment
					// ("sending SIGKILL …: container state improper", Podman issue 16142); a moment later it is stopped.
					if (attempt < REMOVE_ATTEMPTS && /container state improper/i.test(engineMessage(failure))) {
						await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
						continue;
					}
					throw error;
				}
			}
		});
	}

	async inspect(idOrName: string): Promise<ContainerInfo | undefined> {
		try {
			const data = await this.inspected(idOrName);
			return {
				id: data.Id,
				name: data.Name.replace(/^\//, ''),
				image: data.Config.Image,
				state: data.State.Status as ContainerState,
				labels: data.Config.Labels ?? {},
				createdAt: data.Created,
				startedAt: data.State.StartedAt,
				exitCode: data.State.ExitCode,
			};
		} catch (error) {
			if (error instanceof HangarError && error.status === 404) return undefined;
			throw error;
		}
	}

	private inspected(idOrName: string): Promise<Dockerode.ContainerInspectInfo> {
		return this.request(`container ${idOrName}`, (api) => api.json<Dockerode.ContainerInspectInfo>('GET', `/containers/${encodeURIComponent(idOrName)}/json`));
	}

	async list(labels: Readonly<Record<string, string>>): Promise<ContainerInfo[]> {
		const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
		const containers = await this.request('list containers', (api) => api.json<Dockerode.ContainerInfo[]>('GET', `/containers/json?all=1&filters=${encodeURIComponent(filters)}`));
		return containers.map((container) => ({
			id: container.Id,
			name: (container.Names[0] ?? '').replace(/^\//, ''),
			image: container.Image,
			state: container.State as ContainerState,
			labels: container.Labels ?? {},
			createdAt: new Date(container.Created * 1000).toISOString(),
			exitCode: exitCodeOf(container.Status),
		}));
	}

	async endpoint(id: string, containerPort: number): Promise<Endpoint> {
		const data = await this.inspected(id);
		const binding = data.NetworkSettings.Ports?.[`${containerPort}/tcp`]?.[0];
		if (binding?.HostPort) {
			const host = !binding.HostIp || binding.HostIp === '0.0.0.0' ? '127.0.0.1' : binding.HostIp;
			return { host, port: Number(binding.HostPort) };
		}
		const address = Object.values(data.NetworkSettings.Networks ?? {}).find((network) => network.IPAddress)?.IPAddress;
		if (!address) throw new HangarError(500, `container ${id} can not be reached on port ${containerPort}`, 'runtime_error');
		return { host: address, port: containerPort };
	}

	async createIsolatedNetwork(name: string, labels: Readonly<Record<string, string>>): Promise<{ gateway: string }> {
		const existing = await this.networkGateway(name);
		if (existing) return { gateway: existing };
		await this.call(`create network ${name}`, async (docker) => {
			try {
				await docker.createNetwork({ Name: name, Driver: 'bridge', Internal: true, Labels: { ...labels }, CheckDuplicate: true });
			} catch (error) {
				if ((error as EngineError).statusCode !== 409) throw error; // created meanwhile
			}
		});
		const gateway = await this.networkGateway(name);
		if (!gateway) throw new HangarError(500, `network ${name} has no gateway address`, 'runtime_error');
		return { gateway };
	}

	async networkGateway(name: string): Promise<string | undefined> {
		try {
			const data = await this.request(`network ${name}`, (api) => api.json<Dockerode.NetworkInspectInfo>('GET', `/networks/${encodeURIComponent(name)}`));
			return (data.IPAM?.Config ?? []).map((config: { Gateway?: string }) => config.Gateway).find(Boolean);
		} catch (error) {
			if (error instanceof HangarError && error.status === 404) return undefined;
			throw error;
		}
	}

	async removeNetwork(name: string): Promise<void> {
		await this.call(`remove network ${name}`, async (docker) => {
			try {
				await docker.getNetwork(name).remove();
			} catch (error) {
				if ((error as EngineError).statusCode !== 404) throw error;
			}
		});
	}

	async attach(id: string): Promise<Attachment> {
		const socket = await this.request(`attach to container ${id}`, (api) => api.hijack(`/containers/${encodeURIComponent(id)}/attach?stream=1&stdin=1&stdout=1&stderr=1`));
		return this.streamAttachment(socket);
	}

	/** An attachment over a hijacked engine connection carrying multiplexed stdout/stderr. */
	private streamAttachment(socket: Duplex): Attachment {
		let deliver: ((chunk: Buffer) => void) | undefined;
		const early: Buffer[] = [];
		const demux = demultiplexer((stream, payload) => {
			if (stream !== 1) return;
			if (deliver) deliver(payload);
			else early.push(Buffer.from(payload));
		});
		const closed = new Promise<void>((resolve) => {
			socket.once('end', resolve);
			socket.once('close', resolve);
			socket.once('error', resolve);
		});
		socket.on('data', demux);
		return {
			stdin: socket,
			onStdout: (listener) => {
				deliver = listener;
				for (const chunk of early.splice(0)) listener(chunk);
			},
			closed,
			close: () => socket.destroy(),
		};
	}

	async execCommand(id: string): Promise<Attachment> {
		const socket = await this.request(`run the command of container ${id} again`, async (api) => {
			const { Config } = await api.json<Dockerode.ContainerInspectInfo>('GET', `/containers/${encodeURIComponent(id)}/json`);
			const command = [...(Config.Entrypoint ?? []), ...(Config.Cmd ?? [])];
			if (command.length === 0) throw new HangarError(409, `container ${id} has no command to run again`, 'conflict');
			const exec = await api.json<{ Id: string }>('POST', `/containers/${encodeURIComponent(id)}/exec`, { Cmd: command, AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false });
			return api.hijack(`/exec/${exec.Id}/start`, { Detach: false, Tty: false });
		});
		const attachment = this.streamAttachment(socket);
		return {
			...attachment,
			// End of stdin ends a stdio server; the connection goes a moment later if it does not.
			close: () => {
				socket.end();
				setTimeout(() => socket.destroy(), 5_000).unref();
			},
		};
	}

	async logs(id: string, lines: number, options: LogOptions = {}): Promise<string> {
		const raw = await this.call(`logs of container ${id}`, (docker) =>
			docker.getContainer(id).logs({ stdout: !options.stderrOnly, stderr: true, tail: lines, follow: false, timestamps: options.timestamps ?? false }),
		);
		const parts: Buffer[] = [];
		demultiplexer((_, payload) => parts.push(payload))(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)));
		return Buffer.concat(parts).toString('utf8');
	}
}

/** Only the default networks publish ports; an isolated network has no route to publish through. */
function isDefaultNetwork(network: string): boolean {
	return network === 'bridge' || network === 'default';
}

/**
 * Splits Docker's multiplexed stream (8-byte frame headers: stream type, 3 zero bytes, size)
 * into payloads, across chunk boundaries. Payloads may be views into the chunk.
 */
export function demultiplexer(onFrame: (stream: number, payload: Buffer) => void): (chunk: Buffer) => void {
	let pending: Buffer | undefined;
	return (chunk) => {
		const data = pending ? Buffer.concat([pending, chunk]) : chunk;
		pending = undefined;
		let offset = 0;
		while (data.length - offset >= 8) {
			const size = data.readUInt32BE(offset + 4);
			if (data.length - offset - 8 < size) break;
			onFrame(data[offset]!, data.subarray(offset + 8, offset + 8 + size));
			offset += 8 + size;
		}
		if (offset < data.length) pending = Buffer.from(data.subarray(offset));
	};
}

/** Connection options for an engine address as the Docker CLI reads `DOCKER_HOST`. */
export function engineOptions(host: string, env: NodeJS.ProcessEnv): Dockerode.DockerOptions {
	if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) || '/var/run/docker.sock' };
	if (host.startsWith('npipe://')) return { socketPath: pipePathOf(host) };
	const url = new URL(host.includes('://') ? host : `tcp://${host}`);
	if (url.protocol === 'ssh:') {
		return { protocol: 'ssh', host: url.hostname, port: url.port || 22, username: url.username || undefined, sshOptions: { agent: env.SSH_AUTH_SOCK } };
	}
	const tls = env.DOCKER_TLS_VERIFY === '1' || url.port === '2376';
	const options: Dockerode.DockerOptions = { protocol: tls ? 'https' : 'http', host: url.hostname, port: url.port || (tls ? 2376 : 2375) };
	if (tls && env.DOCKER_CERT_PATH) {
		const read = (file: string) => readFileSync(join(env.DOCKER_CERT_PATH!, file));
		Object.assign(options, { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') });
	}
	return options;
}

function engineMessage(error: EngineError): string {
	const message = error.json?.message ?? error.message ?? String(error);
	return message.replace(/^\(HTTP code \d+\)\s*[^-]*-\s*/, '').trim();
}

function exitCodeOf(status: string | undefined): number | undefined {
	const match = /Exited \((-?\d+)\)/.exec(status ?? '');
	return match ? Number(match[1]) : undefined;
}

type EngineName = Pick<RuntimeInfo, 'name' | 'version'>;

/**
 * The engine as its `/_ping` answer names it: Podman by `Libpod-Api-Version`, Docker by
 * `Server: Docker/<version> (<os>)`; undefined for any other answer.
 */
function engineNamedBy(headers: IncomingHttpHeaders | undefined): EngineName | undefined {
	const libpod = headers?.['libpod-api-version'];
	if (typeof libpod === 'string' && libpod) return { name: 'podman', version: libpod };
	const server = headers?.server;
	const docker = typeof server === 'string' ? /^Docker\/(\S+)/.exec(server) : null;
	return docker ? { name: 'docker', version: docker[1]! } : undefined;
}

/** The engine as its `/version` answer names it: Podman's Docker-compatible service lists itself among the components. */
function engineOfVersion(version: Dockerode.DockerVersion): EngineName {
	const podman = (version.Components ?? []).find((component) => /podman/i.test(component.Name));
	return { name: podman ? 'podman' : 'docker', version: podman?.Version ?? version.Version };
}
