import { decodeSecret } from './config.js';
import { networkNameOf } from '../runspec/network.js';
/** Labels on every workload container; the runtime is the truth for container state. */
export const LABELS = {
    managed: 'hangar',
    instance: 'hangar.instance',
    name: 'hangar.name',
    group: 'hangar.group',
    transport: 'hangar.transport',
    port: 'hangar.port',
    networkIsolation: 'hangar.network-isolation',
};
/** Labels that select this Hangar's containers. */
export function instanceLabels(instance) {
    return { [LABELS.managed]: 'true', [LABELS.instance]: instance };
}
/** Reads the values of the workload's secrets; a missing one fails with the resolver's 404. */
export async function resolveSecretEnv(workload, secrets) {
    const env = {};
    for (const stored of workload.secrets ?? []) {
        const { name, target } = decodeSecret(stored);
        env[target] = await secrets.resolve(name);
    }
    return env;
}
function mountsOf(workload) {
    const mounts = [];
    for (const volume of workload.volumes ?? []) {
        const [source, target, mode] = volume.split(':');
        mounts.push({ source: source, target: target, readOnly: mode === 'ro' });
    }
    for (const access of ['read', 'write']) {
        for (const entry of workload.permission_profile?.[access] ?? []) {
            const [source, target = source] = entry.split(':');
            mounts.push({ source: source, target: target, readOnly: access === 'read' });
        }
    }
    return mounts;
}
export function containerSpecOf(workload, instance, secretEnv, egress) {
    const http = workload.transport !== 'stdio';
    const transportEnv = { MCP_TRANSPORT: workload.transport ?? 'stdio' };
    if (http && workload.target_port) {
        // The server listens inside its own network namespace; only the published loopback port reaches it.
        Object.assign(transportEnv, { MCP_PORT: String(workload.target_port), FASTMCP_PORT: String(workload.target_port), MCP_HOST: '0.0.0.0' });
    }
    const proxyEnv = {};
    if (egress) {
        const url = `http://${egress.gateway}:${egress.port}`;
        Object.assign(proxyEnv, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: 'localhost,127.0.0.1', no_proxy: 'localhost,127.0.0.1' });
    }
    return {
        name: workload.container_name,
        image: workload.image,
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
        },
        interactive: !http,
        publishPort: http ? workload.target_port : undefined,
        mounts: mountsOf(workload),
        network: workload.permission_profile?.network?.mode === 'none' ? 'none' : egress ? networkNameOf(workload) : 'bridge',
        restartPolicy: workload.restart_policy,
    };
}
//# sourceMappingURL=container.js.map