/** Why the proxy cannot authenticate to its remote server: shown in the workload's status and to the caller. */
export class UpstreamAuthError extends Error {
	override readonly name = 'UpstreamAuthError';

	constructor(
		message: string,
		/** Set while the proxy retries on its own: when the next attempt is due. */
		readonly retryAfterSeconds?: number,
	) {
		super(message);
	}
}
