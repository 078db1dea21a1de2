/** Why the proxy cannot authenticate to its remote server: shown in the workload's status and to the caller. */
export class UpstreamAuthError extends Error {
	override readonly name = 'UpstreamAuthError';

	/** Set while the proxy retries on its own: when the next attempt is due. */
	readonly retryAfterSeconds: number | undefined;
	/** The authorization server could not be read (an outage to wait out), rather than refused. */
	readonly unreachable: boolean;

	constructor(message: string, options: { retryAfterSeconds?: number; unreachable?: boolean } = {}) {
		super(message);
		this.retryAfterSeconds = options.retryAfterSeconds;
		this.unreachable = options.unreachable ?? false;
	}
}
