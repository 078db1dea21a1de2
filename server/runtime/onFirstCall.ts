/**
 * A runtime whose engine client is made on its first call. Reading remote workloads and
 * aggregates (`hangar ls`, `info`, `logs` of them) asks no engine, and then loads none of the
 * engine's client (node:http and the engine API's code).
 */
import type { Progress } from '../context.js';
import type { ContainerSpec, ImageBuild, LogOptions, Runtime } from './runtime.js';

export class RuntimeOnFirstCall implements Runtime {
	private made?: Promise<Runtime>;

	constructor(private readonly make: () => Promise<Runtime>) {}

	private get engine(): Promise<Runtime> {
		return (this.made ??= this.make());
	}

	async info() {
		return (await this.engine).info();
	}

	async imageExists(image: string) {
		return (await this.engine).imageExists(image);
	}

	async imageLabels(image: string) {
		return (await this.engine).imageLabels(image);
	}

	async pullImage(image: string, progress: Progress, signal: AbortSignal) {
		return (await this.engine).pullImage(image, progress, signal);
	}

	async buildImage(build: ImageBuild, progress: Progress, signal: AbortSignal) {
		return (await this.engine).buildImage(build, progress, signal);
	}

	async create(spec: ContainerSpec) {
		return (await this.engine).create(spec);
	}

	async start(id: string) {
		return (await this.engine).start(id);
	}

	async stop(id: string, graceSeconds: number) {
		return (await this.engine).stop(id, graceSeconds);
	}

	async remove(id: string) {
		return (await this.engine).remove(id);
	}

	async inspect(idOrName: string) {
		return (await this.engine).inspect(idOrName);
	}

	async list(labels: Readonly<Record<string, string>>) {
		return (await this.engine).list(labels);
	}

	async endpoint(id: string, containerPort: number) {
		return (await this.engine).endpoint(id, containerPort);
	}

	async createIsolatedNetwork(name: string, labels: Readonly<Record<string, string>>) {
		return (await this.engine).createIsolatedNetwork(name, labels);
	}

	async networkGateway(name: string) {
		return (await this.engine).networkGateway(name);
	}

	async removeNetwork(name: string) {
		return (await this.engine).removeNetwork(name);
	}

	async attach(id: string) {
		return (await this.engine).attach(id);
	}

	async execCommand(id: string) {
		return (await this.engine).execCommand(id);
	}

	async logs(id: string, lines: number, options?: LogOptions) {
		return (await this.engine).logs(id, lines, options);
	}
}
