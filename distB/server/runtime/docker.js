/**
 * The Docker Engine runtime, over dockerode (imported on first use so the daemon starts
 * fast). The engine is found as the Docker CLI finds it: `DOCKER_HOST` (unix://, tcp://,
 * npipe://), else the default socket (`/var/run/docker.sock`, then Docker Desktop's
 * `~/.docker/run/docker.sock`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
/** Engine errors that mean "nobody answers at the socket". */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'EPERM', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOTFOUND']);
export class DockerRuntime {
    env;
    docker;
    constructor(env = process.env) {
        this.env = env;
    }
    /** Where the engine is expected, for error messages. */
    get address() {
        return this.env.DOCKER_HOST || 'the default Docker socket (/var/run/docker.sock)';
    }
    client() {
        return (this.docker ??= import('dockerode').then(({ default: Docker }) => new Docker(engineOptions(this.env))));
    }
    /** Runs an engine call, turning transport failures into 503 and engine statuses into HangarErrors. */
    async call(what, work) {
        try {
            return await work(await this.client());
        }
        catch (error) {
            throw this.translate(what, error);
        }
    }
    translate(what, error) {
        if (error instanceof HangarError)
            return error;
        const failure = error;
        if (failure.code && UNREACHABLE.has(failure.code)) {
            return new HangarError(503, `no container runtime answers at ${this.address} (${failure.code}); start Docker or set DOCKER_HOST`, 'runtime_unavailable', { cause: error });
        }
        const detail = engineMessage(failure);
        if (failure.statusCode === 404)
            return new HangarError(404, `${what}: ${detail}`, 'not_found', { cause: error });
        if (failure.statusCode === 409)
            return new HangarError(409, `${what}: ${detail}`, 'conflict', { cause: error });
        return new HangarError(500, `${what}: ${detail}`, 'runtime_error', { cause: error });
    }
    async info() {
        const version = await this.call('container runtime version', (docker) => docker.version());
        return { name: 'docker', version: version.Version };
    }
    async imageExists(image) {
        try {
            await this.call(`image ${image}`, (docker) => docker.getImage(image).inspect());
            return true;
        }
        catch (error) {
            if (error instanceof HangarError && error.status === 404)
                return false;
            throw error;
        }
    }
    async pullImage(image, progress, signal) {
        const docker = await this.client();
        progress.report(`pulling ${image}`);
        try {
            const stream = await docker.pull(image, { abortSignal: signal });
            await new Promise((resolve, reject) => {
                docker.modem.followProgress(stream, (error) => (error ? reject(error) : resolve()), (event) => {
                    if (event.status)
                        progress.report(`${event.id ? `${event.id}: ` : ''}${event.status}${event.progress ? ` ${event.progress}` : ''}`);
                });
            });
        }
        catch (error) {
            if (signal.aborted)
                throw HangarError.cancelled(`pull of ${image}`);
            const translated = this.translate(`pull ${image}`, error);
            if (translated instanceof HangarError && translated.status === 503)
                throw translated;
            // An unknown image and an unreachable registry look alike from here: either way the
            // image cannot be had, which is what the caller needs to know.
            throw new HangarError(404, `image ${image} not found: it is not available locally and the pull failed (${engineMessage(error)})`, 'image_not_found', {
                cause: error,
            });
        }
    }
    async create(spec) {
        const exposed = spec.publishPort === undefined ? undefined : `${spec.publishPort}/tcp`;
        const container = await this.call(`create container ${spec.name}`, (docker) => docker.createContainer({
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
        }));
        return container.id;
    }
    async start(id) {
        await this.call(`start container ${id}`, async (docker) => {
            try {
                await docker.getContainer(id).start();
            }
            catch (error) {
                if (error.statusCode !== 304)
                    throw error; // 304: already running
            }
        });
    }
    async stop(id, graceSeconds) {
        await this.call(`stop container ${id}`, async (docker) => {
            try {
                await docker.getContainer(id).stop({ t: graceSeconds });
            }
            catch (error) {
                const status = error.statusCode;
                if (status !== 304 && status !== 404)
                    throw error; // already stopped, or gone
            }
        });
    }
    async remove(id) {
        await this.call(`remove container ${id}`, async (docker) => {
            try {
                await docker.getContainer(id).remove({ force: true, v: true });
            }
            catch (error) {
                const failure = error;
                if (failure.statusCode === 404)
                    return;
                if (failure.statusCode === 409 && /already in progress/i.test(engineMessage(failure)))
                    return;
                throw error;
            }
        });
    }
    async inspect(idOrName) {
        try {
            const data = await this.call(`container ${idOrName}`, (docker) => docker.getContainer(idOrName).inspect());
            return {
                id: data.Id,
                name: data.Name.replace(/^\//, ''),
                image: data.Config.Image,
                state: data.State.Status,
                labels: data.Config.Labels ?? {},
                createdAt: data.Created,
                startedAt: data.State.StartedAt,
                exitCode: data.State.ExitCode,
            };
        }
        catch (error) {
            if (error instanceof HangarError && error.status === 404)
                return undefined;
            throw error;
        }
    }
    async list(labels) {
        const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
        const containers = await this.call('list containers', (docker) => docker.listContainers({ all: true, filters }));
        return containers.map((container) => ({
            id: container.Id,
            name: (container.Names[0] ?? '').replace(/^\//, ''),
            image: container.Image,
            state: container.State,
            labels: container.Labels ?? {},
            createdAt: new Date(container.Created * 1000).toISOString(),
            exitCode: exitCodeOf(container.Status),
        }));
    }
    async endpoint(id, containerPort) {
        const data = await this.call(`container ${id}`, (docker) => docker.getContainer(id).inspect());
        const binding = data.NetworkSettings.Ports?.[`${containerPort}/tcp`]?.[0];
        if (binding?.HostPort) {
            const host = !binding.HostIp || binding.HostIp === '0.0.0.0' ? '127.0.0.1' : binding.HostIp;
            return { host, port: Number(binding.HostPort) };
        }
        const address = Object.values(data.NetworkSettings.Networks ?? {}).find((network) => network.IPAddress)?.IPAddress;
        if (!address)
            throw new HangarError(500, `container ${id} can not be reached on port ${containerPort}`, 'runtime_error');
        return { host: address, port: containerPort };
    }
    async createIsolatedNetwork(name, labels) {
        const existing = await this.networkGateway(name);
        if (existing)
            return { gateway: existing };
        await this.call(`create network ${name}`, async (docker) => {
            try {
                await docker.createNetwork({ Name: name, Driver: 'bridge', Internal: true, Labels: { ...labels }, CheckDuplicate: true });
            }
            catch (error) {
                if (error.statusCode !== 409)
                    throw error; // created meanwhile
            }
        });
        const gateway = await this.networkGateway(name);
        if (!gateway)
            throw new HangarError(500, `network ${name} has no gateway address`, 'runtime_error');
        return { gateway };
    }
    async networkGateway(name) {
        try {
            const data = await this.call(`network ${name}`, (docker) => docker.getNetwork(name).inspect());
            return (data.IPAM?.Config ?? []).map((config) => config.Gateway).find(Boolean);
        }
        catch (error) {
            if (error instanceof HangarError && error.status === 404)
                return undefined;
            throw error;
        }
    }
    async removeNetwork(name) {
        await this.call(`remove network ${name}`, async (docker) => {
            try {
                await docker.getNetwork(name).remove();
            }
            catch (error) {
                if (error.statusCode !== 404)
                    throw error;
            }
        });
    }
    async attach(id) {
        const socket = (await this.call(`attach to container ${id}`, (docker) => docker.getContainer(id).attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })));
        return this.streamAttachment(socket);
    }
    /** An attachment over a hijacked engine connection carrying multiplexed stdout/stderr. */
    streamAttachment(socket) {
        let deliver;
        const early = [];
        const demux = demultiplexer((stream, payload) => {
            if (stream !== 1)
                return;
            if (deliver)
                deliver(payload);
            else
                early.push(Buffer.from(payload));
        });
        const closed = new Promise((resolve) => {
            socket.once('end', resolve);
            socket.once('close', resolve);
            socket.once('error', resolve);
        });
        socket.on('data', demux);
        return {
            stdin: socket,
            onStdout: (listener) => {
                deliver = listener;
                for (const chunk of early.splice(0))
                    listener(chunk);
            },
            closed,
            close: () => socket.destroy(),
        };
    }
    async execCommand(id) {
        const socket = (await this.call(`run the command of container ${id} again`, async (docker) => {
            const container = docker.getContainer(id);
            const { Config } = await container.inspect();
            const command = [...(Config.Entrypoint ?? []), ...(Config.Cmd ?? [])];
            if (command.length === 0)
                throw new HangarError(409, `container ${id} has no command to run again`, 'conflict');
            const exec = await container.exec({ Cmd: command, AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false });
            return exec.start({ hijack: true, stdin: true });
        }));
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
    async logs(id, lines) {
        const raw = await this.call(`logs of container ${id}`, (docker) => docker.getContainer(id).logs({ stdout: true, stderr: true, tail: lines, follow: false }));
        const parts = [];
        demultiplexer((_, payload) => parts.push(payload))(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)));
        return Buffer.concat(parts).toString('utf8');
    }
}
/** Only the default networks publish ports; an isolated network has no route to publish through. */
function isDefaultNetwork(network) {
    return network === 'bridge' || network === 'default';
}
/**
 * Splits Docker's multiplexed stream (8-byte frame headers: stream type, 3 zero bytes, size)
 * into payloads, across chunk boundaries. Payloads may be views into the chunk.
 */
export function demultiplexer(onFrame) {
    let pending;
    return (chunk) => {
        const data = pending ? Buffer.concat([pending, chunk]) : chunk;
        pending = undefined;
        let offset = 0;
        while (data.length - offset >= 8) {
            const size = data.readUInt32BE(offset + 4);
            if (data.length - offset - 8 < size)
                break;
            onFrame(data[offset], data.subarray(offset + 8, offset + 8 + size));
            offset += 8 + size;
        }
        if (offset < data.length)
            pending = Buffer.from(data.subarray(offset));
    };
}
/**
 * Connection options for `DOCKER_HOST` as the Docker CLI reads it; undefined lets dockerode
 * find the default socket.
 */
export function engineOptions(env) {
    const host = env.DOCKER_HOST;
    if (!host)
        return undefined;
    if (host.startsWith('unix://'))
        return { socketPath: host.slice('unix://'.length) || '/var/run/docker.sock' };
    if (host.startsWith('npipe://'))
        return { socketPath: host.slice('npipe://'.length) || '//./pipe/docker_engine' };
    const url = new URL(host.includes('://') ? host : `tcp://${host}`);
    if (url.protocol === 'ssh:') {
        return { protocol: 'ssh', host: url.hostname, port: url.port || 22, username: url.username || undefined, sshOptions: { agent: env.SSH_AUTH_SOCK } };
    }
    const tls = env.DOCKER_TLS_VERIFY === '1' || url.port === '2376';
    const options = { protocol: tls ? 'https' : 'http', host: url.hostname, port: url.port || (tls ? 2376 : 2375) };
    if (tls && env.DOCKER_CERT_PATH) {
        const read = (file) => readFileSync(join(env.DOCKER_CERT_PATH, file));
        Object.assign(options, { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') });
    }
    return options;
}
function engineMessage(error) {
    const message = error.json?.message ?? error.message ?? String(error);
    return message.replace(/^\(HTTP code \d+\)\s*[^-]*-\s*/, '').trim();
}
function exitCodeOf(status) {
    const match = /Exited \((-?\d+)\)/.exec(status ?? '');
    return match ? Number(match[1]) : undefined;
}
//# sourceMappingURL=docker.js.map