/** Why the proxy cannot authenticate to its remote server: shown in the workload's status and to the caller. */
export class UpstreamAuthError extends Error {
	override readonly name = 'UpstreamAuthError';
}
