/**
 * A workload's status as reported: the status a service last recorded, checked against what
 * is true now (is the container there and running, is the proxy alive, does it reach the
 * server). Transitional states (`starting`, `stopping`, `removing`) and the outcomes a user
 * chose (`stopped`) or was told about (`error`) are reported as recorded.
 */
import type { WorkloadStatus } from '../../protocol/protocol.workloads.js';
import type { ContainerInfo } from '../runtime/runtime.js';
import type { Drift } from './pins.js';
import { isServing, isSignInState, type ProxyRecord, type StoredStatus, type StoredWorkload } from '../runspec/store.js';

/** Why a workload whose container vanished is in error. */
export const CONTAINER_GONE = 'the container is gone (removed outside Hangar)';

export interface EffectiveStatus {
	readonly status: WorkloadStatus;
	readonly context?: string;
}

export interface Observed {
	readonly recorded: StoredStatus | undefined;
	/** The container, or undefined when it is gone; `unavailable` when the runtime did not answer. */
	readonly container: ContainerInfo | undefined | { unavailable: string };
	/** The live proxy's record, or undefined when no proxy runs. */
	readonly proxy: ProxyRecord | undefined;
	/** Which tools differ from their pins (pins.ts), when some do. */
	readonly drift?: Drift;
}

const SESSIONS_NOT_SHARED = 'the replicas cannot reach Redis (scaling_config.session_redis): each session stays on the replica that opened it, and ends with it';

export function effectiveStatus(workload: StoredWorkload, observed: Observed): EffectiveStatus {
	const { recorded, container, proxy } = observed;
	if (!recorded) return { status: 'unknown', context: 'no status recorded' };
	if (!isServing(recorded.status)) {
		return { status: recorded.status, context: recorded.status_context };
	}
	if (workload.container_name) {
		if (container && 'unavailable' in container) return { status: 'unknown', context: container.unavailable };
		if (!container) return { status: 'error', context: CONTAINER_GONE };
		if (container.state === 'restarting') return { status: 'unhealthy', context: 'the container is restarting' };
		if (container.state !== 'running') {
			return { status: 'stopped', context: `the container exited${container.exitCode === undefined ? '' : ` with code ${container.exitCode}`}` };
		}
	}
	if (!proxy) return { status: 'unhealthy', context: 'the proxy is not running' };
	if (isSignInState(proxy.backend)) return { status: proxy.backend, context: proxy.backend_detail };
	if (proxy.backend !== 'connected') {
		return { status: 'unhealthy', context: `the proxy cannot reach the server${proxy.backend_detail ? `: ${proxy.backend_detail}` : ''}` };
	}
	if (observed.drift) return { status: 'running', context: observed.drift.context };
	if (proxy.sessions_shared === false) return { status: 'running', context: SESSIONS_NOT_SHARED };
	// A serving backend's note (an aggregate's members' definitions it repaired or left out).
	if (proxy.backend_detail) return { status: 'running', context: proxy.backend_detail };
	return { status: 'running', context: recorded.status === 'running' ? recorded.status_context : undefined };
}

/** Statuses listed without `all`: workloads that are up, or on their way up. */
export function isActive(status: WorkloadStatus): boolean {
	return isServing(status) || status === 'starting';
}
