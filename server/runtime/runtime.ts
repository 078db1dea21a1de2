/**
 * The container runtime behind workloads, kept to what services need so that another
 * runtime (Kubernetes, Podman's API) can be added without touching them. Errors are
 * `HangarError`s: 503 when no engine answers, 404 for a missing image or container.
 */
import type { Writable } from 'node:stream';
import type { Progress } from '../context.js';

export type RestartPolicy = 'no' | 'on-failure' | 'unless-stopped' | 'always';

export interface Mount {
	/** Absolute path on the host. */
	readonly source: string;
	/** Absolute path in the container. */
	readonly target: string;
	readonly readOnly: boolean;
}

export interface ContainerSpec {
	readonly name: string;
	readonly image: string;
	/** Arguments appended to the image's entrypoint. */
	readonly args: readonly string[];
	readonly env: Readonly<Record<string, string>>;
	readonly labels: Readonly<Record<string, string>>;
	/** Keep stdin open so the server can be attached to (stdio transport). */
	readonly interactive: boolean;
	/** Container port to publish on the host's loopback (sse and streamable-http transports). */
	readonly publishPort?: number;
	readonly mounts: readonly Mount[];
	/**
	 * `none` cuts the container off any network; `bridge` is the runtime default; any other
	 * value names a network made with `createIsolatedNetwork`.
	 */
	readonly network: string;
	readonly restartPolicy: RestartPolicy;
}

export type ContainerState = 'created' | 'running' | 'paused' | 'restarting' | 'exited' | 'dead' | 'removing';

export interface ContainerInfo {
	readonly id: string;
	readonly name: string;
	readonly image: string;
	readonly state: ContainerState;
	readonly labels: Readonly<Record<string, string>>;
	readonly createdAt?: string;
	readonly startedAt?: string;
	readonly exitCode?: number;
}

/** Where a published container port answers on the host. */
export interface Endpoint {
	readonly host: string;
	readonly port: number;
}

/** A live connection to a container's stdio. */
export interface Attachment {
	readonly stdin: Writable;
	/**
	 * Sets where the server's stdout (not its stderr) goes, chunk by chunk, in order; what
	 * arrived before is delivered first. A plain callback rather than a stream: this is the
	 * proxy's hot path.
	 */
	onStdout(listener: (chunk: Buffer) => void): void;
	/** Ends the connection; the container keeps running and its stdin stays open. */
	close(): void;
	/** Resolves when the connection ends, from either side. */
	readonly closed: Promise<void>;
}

export interface RuntimeInfo {
	/** `docker` or `podman`. */
	readonly name: string;
	readonly version?: string;
	/** Where the engine answers (`unix:///…`, `tcp://…`). */
	readonly address?: string;
	/** How Hangar found it (`DOCKER_HOST`, the Docker context NAME, Podman's rootless socket…). */
	readonly found_by?: string;
}

/** What `version` says of the engine: its report, or that none answered and why. */
export type EngineReport = RuntimeInfo | { readonly name: 'none'; readonly error: string };

/** The engine's report; never fails (the version must answer whether an engine does or not). */
export async function reportEngine(runtime: Runtime): Promise<EngineReport> {
	try {
		return await runtime.info();
	} catch (error) {
		return { name: 'none', error: (error as Error).message };
	}
}

/** An image build from a context folder holding a `Dockerfile`. */
export interface ImageBuild {
	readonly contextDir: string;
	readonly tag: string;
	/** The network of the build's steps; the engine's default when absent. */
	readonly network?: string;
}

export interface LogOptions {
	readonly timestamps?: boolean;
	readonly stderrOnly?: boolean;
}

export interface Runtime {
	/** Name and version of the engine; 503 when none answers. */
	info(): Promise<RuntimeInfo>;
	imageExists(image: string): Promise<boolean>;
	/** The labels of a local image (its OCI config's); 404 when the engine does not have it. */
	imageLabels(image: string): Promise<Readonly<Record<string, string>>>;
	/** Pulls an image, reporting progress; 404 when the registry does not have it. */
	pullImage(image: string, progress: Progress, signal: AbortSignal): Promise<void>;
	/**
	 * Builds and tags an image, reporting each step; a failed step is a 422 `build_failed`
	 * naming the step, with the build's last lines.
	 */
	buildImage(build: ImageBuild, progress: Progress, signal: AbortSignal): Promise<void>;
	/** Creates a container and returns its id; 409 when the name is taken. */
	create(spec: ContainerSpec): Promise<string>;
	start(id: string): Promise<void>;
	/** Stops a container, killing it after `graceSeconds`; a stopped container is fine. */
	stop(id: string, graceSeconds: number): Promise<void>;
	/** Removes a container, running or not; a missing container is fine. */
	remove(id: string): Promise<void>;
	/** The container by id or name, or undefined. */
	inspect(idOrName: string): Promise<ContainerInfo | undefined>;
	/** Containers (running or not) carrying every one of `labels`. */
	list(labels: Readonly<Record<string, string>>): Promise<ContainerInfo[]>;
	/**
	 * Where the host reaches a container port: its published loopback port, or (on an isolated
	 * network, which publishes nothing) the container's address there.
	 */
	endpoint(id: string, containerPort: number): Promise<Endpoint>;
	/**
	 * Creates (or finds) a network with no route out: its containers reach only the host's
	 * address on it, the gateway, which the network's egress proxy listens on.
	 */
	createIsolatedNetwork(name: string, labels: Readonly<Record<string, string>>): Promise<{ gateway: string }>;
	/** The gateway address of an isolated network, or undefined when it does not exist. */
	networkGateway(name: string): Promise<string | undefined>;
	/** Removes a network; a missing one is fine. */
	removeNetwork(name: string): Promise<void>;
	attach(id: string): Promise<Attachment>;
	/**
	 * Runs the container's own command (entrypoint and arguments) once more, as another process
	 * in the same container (same environment, mounts and network), attached to its stdio.
	 * Closing the attachment closes that process's stdin.
	 */
	execCommand(id: string): Promise<Attachment>;
	/**
	 * The last `lines` lines of the container's stdout and stderr (only stderr with
	 * `stderrOnly`: a stdio server's stdout is its protocol stream); with `timestamps`, each line
	 * begins with the engine's RFC 3339 time of it (nanoseconds) and a space.
	 */
	logs(id: string, lines: number, options?: LogOptions): Promise<string>;
}
