/**
 * From a run configuration to a container specification: labels, environment (with the
 * secrets' values, resolved at start), mounts, network and the published port.
 */
import type { Mount, ContainerSpec } from '../runtime/runtime.js';
import { decodeSecret } from './secretReference.js';
import type { SecretResolver } from './dependencies.js';
import { networkNameOf } from '../runspec/network.js';
import { instanceContainerName } from '../runspec/instances.js';
import type { StoredWorkload } from '../runspec/store.js';

/** Labels on every workload container; the runtime is the truth for container state. */
export const LABELS = {
	managed: 'hangar',
	instance: 'hangar.instance',
	name: 'hangar.name',
	group: 'hangar.group',
	transport: 'hangar.transport',
	port: 'hangar.port',
	networkIsolation: 'hangar.network-isolation',
	/** Which of the workload's server instances (`scaling_config.backend_replicas`) a container is: 1 is the first. */
	replica: 'hangar.replica',
} as const;

/** Labels that select this Hangar's containers. */
export function instanceLabels(instance: string): Record<string, string> {
	return { [LABELS.managed]: 'true', [LABELS.instance]: instance };
}

/** Whether a listed container is a workload's first (or only) server instance. */
export function isFirstInstance(container: { readonly labels: Readonly<Record<string, string>> }): boolean {
	const replica = container.labels[LABELS.replica];
	return replica === undefined || replica === '1';
}

/** Reads the values of the workload's secrets; a missing one fails with the resolver's 404. */
export async function resolveSecretEnv(workload: StoredWorkload, secrets: SecretResolver): Promise<Record<string, string>> {
	const env: Record<string, string> = {};
	for (const stored of workload.secrets ?? []) {
		const { name, target } = decodeSecret(stored);
		env[target] = await secrets.resolve(name);
	}
	return env;
}

function mountsOf(workload: StoredWorkload): Mount[] {
	const mounts: Mount[] = [];
	for (const volume of workload.volumes ?? []) {
		const [source, target, mode] = volume.split(':');
		mounts.push({ source: source!, target: target!, readOnly: mode === 'ro' });
	}
	for (const access of ['read', 'write'] as const) {
		for (const entry of workload.permission_profile?.[access] ?? []) {
			const [source, target = source] = entry.split(':');
			mounts.push({ source: source!, target: target!, readOnly: access === 'read' });
		}
	}
	return mounts;
}

/** The egress proxy a network-isolated container must use. */
export interface Egress {
	readonly gateway: string;
	readonly port: number;
}

export function containerSpecOf(workload: StoredWorkload, instance: string, secretEnv: Record<string, string>, egress?: Egress, replica = 1): ContainerSpec {
	const http = workload.transport !== 'stdio';
	const transportEnv: Record<string, string> = { MCP_TRANSPORT: workload.transport ?? 'stdio' };
	if (http && workload.target_port) {
		// The server listens inside its own network namespace; only the published loopback port reaches it.
		Object.assign(transportEnv, { MCP_PORT: String(workload.target_port), FASTMCP_PORT: String(workload.target_port), MCP_HOST: '0.0.0.0' });
	}
	const proxyEnv: Record<string, string> = {};
	if (egress) {
		const url = `http://${egress.gateway}:${egress.port}`;
		Object.assign(proxyEnv, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: 'localhost,127.0.0.1', no_proxy: 'localhost,127.0.0.1' });
	}
	return {
		name: instanceContainerName(workload, replica),
		image: workload.built_image ?? workload.image!,
		args: workload.cmd_args ?? [],
		env: { ...transportEnv, ...proxyEnv, ...(workload.env_vars ?? {}), ...secretEnv },
		labels: {
			...(workload.container_labels ?? {}),
			...instanceLabels(instance),
			[LABELS.name]: workload.name,
			[LABELS.group]: workload.group ?? 'default',
			[LABELS.transport]: workload.transport ?? 'stdio',
			[LABELS.port]: String(workload.port ?? 0),
			[LABELS.networkIsolation]: String(workload.isolate_network ?? true),
			[LABELS.replica]: String(replica),
		},
		interactive: !http,
		publishPort: http ? workload.target_port : undefined,
		mounts: mountsOf(workload),
		network: workload.permission_profile?.network?.mode === 'none' ? 'none' : egress ? networkNameOf(workload) : 'bridge',
		restartPolicy: workload.restart_policy,
	};
}
