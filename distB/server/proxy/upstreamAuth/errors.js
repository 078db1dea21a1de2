/** Why the proxy cannot authenticate to its remote server: shown in the workload's status and to the caller. */
export class UpstreamAuthError extends Error {
    name = 'UpstreamAuthError';
    /** Set while the proxy retries on its own: when the next attempt is due. */
    retryAfterSeconds;
    /** The authorization server could not be read (an outage to wait out), rather than refused. */
    unreachable;
    constructor(message, options = {}) {
        super(message);
        this.retryAfterSeconds = options.retryAfterSeconds;
        this.unreachable = options.unreachable ?? false;
    }
}
//# sourceMappingURL=errors.js.map