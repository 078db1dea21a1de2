/**
 * Assembles the areas' services into one dispatcher. Each door creates one per process.
 *
 * Nothing is built up front: an area's rows, its service and the services it needs are loaded
 * when one of its methods is first called (`hangar group ls` loads the groups area only), and
 * each service is built once, whichever area asks for it first.
 */
import { rowsOf } from '../protocol/operation.js';
import { Dispatcher, type Area, type AreaLoader, type Implementation, type PlainParamsCheck } from './dispatch.js';
import type { Environment } from './environment.js';
import { readManifest, type Manifest } from './manifest.js';
import { jsonSchemaCheck } from './store/jsonSchema.js';
import type { ClientsService } from './clients/service.js';
import type { GroupStore } from './groups/store.js';
import type { RegistryService } from './registry/service.js';
import type { Runtime } from './runtime/runtime.js';
import type { SecretsService } from './secrets/service.js';
import type { SkillService } from './skills/service.js';
import type { WorkloadService } from './workloads/service.js';
import { operationTracing, type Door } from './telemetry/operations.js';

export interface DispatcherOptions {
	/**
	 * The long-running door (daemon, serve) this is for: it repairs workloads at start-up,
	 * reports status changes other processes make, and traces its operations when Hangar's
	 * global telemetry default turns tracing on.
	 */
	readonly door?: Door;
}

/** Builds `create()` on first use and hands the same promise to every later caller. */
function once<T>(create: () => Promise<T>): () => Promise<T> {
	let made: Promise<T> | undefined;
	return () => (made ??= create());
}

/** The services of one process, each built on first use. */
class Services {
	/** Set once the workloads' services exist: only then is there background work to wait for. */
	builtWorkloads: WorkloadService | undefined;

	constructor(private readonly environment: Environment) {}

	readonly groups = once<GroupStore>(async () => new (await import('./groups/store.js')).GroupStore(this.environment.paths));
	readonly registries = once<RegistryService>(async () => new (await import('./registry/service.js')).RegistryService(this.environment));
	readonly secrets = once<SecretsService>(async () => new (await import('./secrets/service.js')).SecretsService(this.environment));
	readonly runtime = once<Runtime>(async () => new (await import('./runtime/docker.js')).DockerRuntime());

	readonly workloads: () => Promise<WorkloadService> = once(async () => {
		const [{ WorkloadService }, { RuntimeOnFirstCall }, groups] = await Promise.all([import('./workloads/service.js'), import('./runtime/onFirstCall.js'), this.groups()]);
		this.builtWorkloads = new WorkloadService({
			environment: this.environment,
			runtime: new RuntimeOnFirstCall(this.runtime),
			// The registries and secrets are built when a workload first needs them: listing
			// workloads needs neither.
			catalog: { findServer: async (name) => (await this.registries()).findServer(name) },
			secrets: { resolve: async (name) => (await this.secrets()).resolve(name), delete: async (key) => (await this.secrets()).delete(key) },
			// Clients list the running workloads; workloads tell clients when that list changes.
			clients: { syncWorkloads: async () => (await this.clients()).syncWorkloads() },
			groups: { exists: async (name) => (await groups.find(name)) !== undefined },
		});
		return this.builtWorkloads;
	});

	readonly clients: () => Promise<ClientsService> = once(async () => {
		const [{ ClientsService }, groups] = await Promise.all([import('./clients/service.js'), this.groups()]);
		return new ClientsService(this.environment, groups, { list: async () => (await this.workloads()).listEndpoints() });
	});

	readonly skills = once<SkillService>(async () => {
		const [{ SkillService }, groups] = await Promise.all([import('./skills/service.js'), this.groups()]);
		return new SkillService(this.environment, groups, { findSkill: async (name) => (await this.registries()).findSkill(name) });
	});
}

/**
 * Each area's rows (its protocol module) and the implementations that serve them, in the
 * operation table's order. The registry service serves two areas, `registries/…` and `catalog/…`.
 */
function areasOf(services: Services): ReadonlyMap<string, AreaLoader> {
	const registryHandlers = async () => (await import('./registry/service.js')).registryImplementations(await services.registries());
	const areas: Array<[string, () => Promise<Record<string, unknown>>, () => Promise<readonly Implementation[]>]> = [
		['system', () => import('../protocol/protocol.system.js'), async () => (await import('./system.js')).systemImplementations(await services.runtime())],
		[
			'groups',
			() => import('../protocol/protocol.groups.js'),
			async () =>
				(await import('./groups/service.js')).groupImplementations(await services.groups(), async (name, withWorkloads) =>
					(await services.workloads()).releaseGroup(name, withWorkloads),
				),
		],
		['clients', () => import('../protocol/protocol.clients.js'), async () => (await import('./clients/service.js')).clientImplementations(await services.clients())],
		['registries', () => import('../protocol/protocol.registries.js'), registryHandlers],
		['catalog', () => import('../protocol/protocol.catalog.js'), registryHandlers],
		['secrets', () => import('../protocol/protocol.secrets.js'), async () => (await import('./secrets/service.js')).secretImplementations(await services.secrets())],
		['skills', () => import('../protocol/protocol.skills.js'), async () => (await import('./skills/service.js')).skillImplementations(await services.skills())],
		['workloads', () => import('../protocol/protocol.workloads.js'), async () => (await import('./workloads/implementations.js')).workloadImplementations(await services.workloads())],
	];
	return new Map(
		areas.map(([name, rows, implementations]): [string, AreaLoader] => [
			name,
			async (): Promise<Area> => {
				const implemented = await implementations();
				return { rows: async () => rowsOf(await rows()), implementations: implemented.filter(({ method }) => method.startsWith(`${name}/`)) };
			},
		]),
	);
}

/** The plain params checks of the build's manifest, each compiled on first use; undefined without a build. */
function plainParamsOfBuild(): PlainParamsCheck | undefined {
	let schemas: Manifest['params'];
	try {
		schemas = readManifest().params;
	} catch {
		return undefined;
	}
	const checks = new Map<string, ReturnType<typeof jsonSchemaCheck>>();
	return (method, params) => {
		const schema = Object.hasOwn(schemas, method) ? schemas[method] : undefined;
		if (!schema) return undefined;
		let check = checks.get(method);
		if (!check) checks.set(method, (check = jsonSchemaCheck(schema)));
		const parsed = check.safeParse(params);
		return parsed.success ? { data: parsed.data } : undefined;
	};
}

export function createDispatcher(environment: Environment, options: DispatcherOptions = {}): Dispatcher {
	const services = new Services(environment);
	const dispatcher = new Dispatcher(areasOf(services), environment.log, plainParamsOfBuild());
	dispatcher.waitOnClose(async () => services.builtWorkloads?.idle());
	if (options.door) {
		const door = options.door;
		// A door repairs workloads and reports others' changes from the start, not on a first call.
		void services
			.workloads()
			.then((workloads) => {
				workloads.startReconcile();
				workloads.watchStatuses();
			})
			.catch((error: Error) => environment.log.error(`the ${door} cannot repair or watch workloads: ${error.message}`));
		dispatcher.intercept(
			import('./workloads/telemetryDefault.js')
				.then(({ TelemetryDefault }) => new TelemetryDefault(environment.paths).get())
				.then((config) => operationTracing(config, door))
				.catch((error: Error) => {
					environment.log.warn(`the ${door}'s operations are not traced: ${error.message}`);
					return undefined;
				}),
		);
	}
	return dispatcher;
}
