/**
 * The messages between the workloads service and a proxy process it spawned, and between a
 * replicated workload's proxy and its replicas, over the process's IPC channel: secret header
 * values go in, readiness (or why it failed) comes out, and a replica's server state after.
 */
import type { BackendState } from './store.js';

export type LaunchMessage = {
	type: 'configure';
	headers: Record<string, string>;
	/** A replica serves the statistics with its supervisor's token, whichever replica is asked. */
	statsToken?: string;
};
export type ProxyReport =
	| { type: 'ready'; port: number }
	| { type: 'failed'; message: string }
	| { type: 'state'; state: BackendState; detail?: string }
	/** A replica can (or can no longer) reach the Redis its sessions are shared through. */
	| { type: 'sessions'; shared: boolean };
