/**
 * The workloads service: creates workloads (run configuration, image, container, proxy),
 * reports them, and stops, restarts, updates and deletes them. Stop, restart and delete
 * return at once and finish in the background, as the spec's 202 says.
 *
 * The work is done by smaller parts: the queue orders the changes of each workload, the
 * lifecycle runs its steps, the observer tells its state, the status feed records and
 * announces it, the port policy picks ports, and the reconciler repairs after a crash.
 */
import { readFile } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import { DEFAULT_GROUP } from '../groups/store.js';
import { buildRunConfig, detailOf, exportedRunConfig, keepCachedAuth } from './config.js';
import { checkCancelled, WorkloadLifecycle } from './lifecycle.js';
import { WorkloadObserver } from './observer.js';
import { PortPolicy } from './portPolicy.js';
import { WorkloadQueue } from './queue.js';
import { Reconciler } from './reconcile.js';
import { effectiveStatus } from './status.js';
import { signIn } from './signIn.js';
import { readStats } from './stats.js';
import { StatusFeed } from './statusFeed.js';
import { isSignInState, WorkloadStore } from '../runspec/store.js';
import { clientTransportOf } from '../runspec/urls.js';
import { TelemetryDefault } from './telemetryDefault.js';
const LOG_LINES = 1000;
export class WorkloadService {
    options;
    store;
    runtime;
    queue;
    statuses;
    ports;
    observer;
    lifecycle;
    reconciler;
    constructor(options) {
        this.options = options;
        const { log, notifier, paths } = options.environment;
        this.store = new WorkloadStore(paths);
        this.runtime = options.runtime;
        this.queue = new WorkloadQueue(this.store, log);
        this.statuses = new StatusFeed(this.store, notifier, log);
        this.ports = new PortPolicy(this.store, log);
        this.observer = new WorkloadObserver(this.store, options.runtime, options.groups);
        this.lifecycle = new WorkloadLifecycle({
            store: this.store,
            runtime: options.runtime,
            secrets: options.secrets,
            clients: options.clients,
            statuses: this.statuses,
            ports: this.ports,
            queue: this.queue,
            log,
            readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
            proxyEntry: options.proxyEntry,
            env: options.env,
        });
        this.reconciler = new Reconciler(this.store, this.queue, this.observer, this.lifecycle, this.statuses, log);
    }
    get log() {
        return this.options.environment.log;
    }
    // --- Create and update ------------------------------------------------------------------
    /**
     * Creates a workload. A server that does not come up (its container exits, a remote URL does
     * not answer) leaves the workload in `error` with the reason, for `logs` and `edit`; a
     * failure or a cancellation before that leaves nothing behind.
     */
    async create(request, context) {
        const { name } = request;
        if (await this.store.configs.get(name))
            throw this.duplicate(name);
        const config = await buildRunConfig(request, { ...this.buildOptions(), defaultTelemetry: await new TelemetryDefault(this.options.environment.paths).get() });
        config.port = await this.ports.choose(config, request.proxy_port, undefined);
        if (!(await this.store.configs.create(name, config)))
            throw this.duplicate(name);
        context.progress.begin(`Creating workload ${name}`);
        try {
            await this.statuses.set(name, 'starting', 'creating');
            const resolved = await this.lifecycle.resolveSecrets(config);
            if (config.image)
                await this.lifecycle.ensureImage(config, context);
            checkCancelled(context, name);
            const outcome = await this.queue.exclusive(name, () => this.lifecycle.start(config, { recreate: true, resolved }, context));
            context.progress.end(outcome.failed ? `${name} did not start: ${outcome.failed}` : `${name} is listening on port ${config.port}`);
            return { name, port: config.port };
        }
        catch (error) {
            context.progress.end(`${name} could not be created`);
            await this.queue.exclusive(name, () => this.lifecycle.purge(config, { bestEffort: true })).catch((purgeError) => this.log.error(`cleaning up ${name}: ${purgeError.message}`));
            throw error;
        }
    }
    /**
     * Recreates a workload with a new configuration, keeping its port unless another is asked
     * for. Transactional: everything the new configuration needs is checked and resolved before
     * the running workload is touched, and when the new one fails to start the old one is put
     * back, with its configuration.
     */
    async update(request, context) {
        const previous = await this.observer.require(request.name);
        const config = await buildRunConfig(request, this.buildOptions(previous));
        keepCachedAuth(previous, config);
        config.port = await this.ports.choose(config, request.proxy_port, previous);
        const resolved = await this.lifecycle.resolveSecrets(config);
        context.progress.begin(`Updating workload ${request.name}`);
        try {
            if (config.image)
                await this.lifecycle.ensureImage(config, context);
            checkCancelled(context, request.name);
            await this.queue.exclusive(request.name, async () => {
                await this.statuses.set(request.name, 'starting', 'updating');
                await this.lifecycle.dismantle(previous);
                await this.store.configs.update(request.name, () => config);
                let failure;
                try {
                    const outcome = await this.lifecycle.start(config, { recreate: true, resolved }, context);
                    if (!outcome.failed)
                        return;
                    failure = new HangarError(502, `workload ${request.name} was not updated: the new configuration does not start: ${outcome.failed}; the previous configuration runs again`, 'server_failed');
                }
                catch (error) {
                    failure = error;
                }
                await this.lifecycle.restore(previous, config);
                throw failure;
            });
        }
        finally {
            context.progress.end();
        }
        return { name: request.name, port: config.port };
    }
    buildOptions(previous) {
        return {
            catalog: this.options.catalog,
            groupExists: (group) => this.options.groups.exists(group),
            previous,
            now: new Date().toISOString(),
            instance: this.store.instance,
        };
    }
    duplicate(name) {
        return HangarError.conflict(`workload with name ${name} already exists`, 'workload_exists');
    }
    async stop(name) {
        await this.observer.require(name);
        await this.statuses.set(name, 'stopping');
        this.queue.background(name, (config) => this.lifecycle.stop(config));
    }
    async restart(name) {
        await this.observer.require(name);
        await this.statuses.set(name, 'starting', 'restarting');
        this.queue.background(name, (config) => this.lifecycle.restart(config));
    }
    async delete(name) {
        await this.observer.require(name);
        await this.statuses.set(name, 'removing');
        this.queue.background(name, (config) => this.lifecycle.delete(config));
    }
    async stopMany(selection) {
        const configs = await this.select(selection);
        await Promise.all(configs.map((config) => this.statuses.set(config.name, 'stopping')));
        this.queue.backgroundMany(configs, (config) => this.lifecycle.stop(config));
    }
    async restartMany(selection) {
        const configs = await this.select(selection);
        await Promise.all(configs.map((config) => this.statuses.set(config.name, 'starting', 'restarting')));
        this.queue.backgroundMany(configs, (config) => this.lifecycle.restart(config));
    }
    async deleteMany(selection) {
        const configs = await this.select(selection);
        await Promise.all(configs.map((config) => this.statuses.set(config.name, 'removing')));
        this.queue.backgroundMany(configs, (config) => this.lifecycle.delete(config));
    }
    /** The workloads named (unknown names are skipped) or in the group (400 when it does not exist). */
    async select(selection) {
        const all = await this.store.configs.list();
        if (selection.group) {
            if (!(await this.options.groups.exists(selection.group))) {
                throw HangarError.badRequest(`group '${selection.group}' does not exist`, 'group_not_found');
            }
            return all.filter((config) => (config.group ?? DEFAULT_GROUP) === selection.group);
        }
        const names = new Set(selection.names ?? []);
        return all.filter((config) => names.has(config.name));
    }
    async list(params) {
        const listed = await this.observer.listed(params);
        return { workloads: listed.map(({ summary }) => summary) };
    }
    async get(name) {
        return detailOf(await this.observer.require(name));
    }
    async export(name) {
        return exportedRunConfig(await this.observer.require(name));
    }
    async status(name) {
        const config = await this.observer.require(name);
        return effectiveStatus(config, await this.observer.observe(config));
    }
    async logs(name) {
        const config = await this.observer.require(name);
        if (!config.container_name)
            throw HangarError.notFound(`workload ${name} is a remote server and has no container logs; see its proxy logs`, 'no_container');
        const container = await this.runtime.inspect(config.container_name);
        if (!container)
            throw HangarError.notFound(`the container of workload ${name} is gone`, 'container_not_found');
        return this.runtime.logs(container.id, LOG_LINES);
    }
    async proxyLogs(name) {
        await this.observer.require(name);
        let text;
        try {
            text = await readFile(this.store.logFile(name), 'utf8');
        }
        catch {
            throw HangarError.notFound(`no proxy log for workload ${name}`, 'log_not_found');
        }
        const lines = text.split('\n');
        if (lines.at(-1) === '')
            lines.pop();
        return lines.slice(-LOG_LINES).map((line) => `${line}\n`).join('');
    }
    async signIn(name, params, context) {
        return signIn(this.store, await this.observer.require(name), params, context?.signal);
    }
    async stats(name, window, context) {
        return readStats(this.store, await this.observer.require(name), window, context?.signal);
    }
    /** Running workloads as registered clients reference them (the clients area's port). */
    async listEndpoints() {
        const listed = await this.observer.listed({ all: false });
        return listed
            .filter(({ summary }) => summary.status === 'running' || isSignInState(summary.status))
            .map(({ config, summary }) => ({ name: summary.name, group: summary.group ?? DEFAULT_GROUP, url: summary.url, transport: clientTransportOf(config) }));
    }
    // --- Groups ------------------------------------------------------------------------------
    /** A group is being deleted: its workloads move to `default`, or are deleted with it. */
    async releaseGroup(group, deleteWorkloads) {
        const members = (await this.store.configs.list()).filter((config) => config.group === group);
        if (deleteWorkloads) {
            await Promise.all(members.map((config) => this.queue.exclusive(config.name, () => this.lifecycle.delete(config))));
            return;
        }
        for (const config of members)
            await this.store.configs.update(config.name, (stored) => ({ ...stored, group: DEFAULT_GROUP }));
        if (members.length)
            this.lifecycle.syncClients();
    }
    // --- Reconcile and background work -------------------------------------------------------
    /**
     * Brings workloads back to what was asked of them, after a crash, a reboot or a daemon
     * restart (see reconcile.ts).
     */
    reconcile() {
        return this.reconciler.run();
    }
    /** Runs `reconcile` in the background (daemon and `hangar serve` start-up). */
    startReconcile() {
        this.queue.track(this.reconcile().catch((error) => this.log.error(`reconcile: ${error.message}`)));
    }
    /** Announces status changes other processes make as `workloads/didChange` too. */
    watchStatuses() {
        this.statuses.watch();
    }
    /** Resolves once the background work started so far is done. */
    idle() {
        return this.queue.idle();
    }
}
//# sourceMappingURL=service.js.map