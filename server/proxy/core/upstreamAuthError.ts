import { visibleText } from '../../../protocol/visibleText.js';
import { boundedReason } from '../../runspec/store.js';

/** Most characters of a server's own text (an issuer, an `error=`) quoted in a reason. */
const MAX_QUOTED = 200;

/** A server's text inside a reason: quoted, bounded, its control characters visible. */
export function quoted(text: string): string {
	return `"${visibleText(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text, true)}"`;
}

/** Why the proxy cannot authenticate to its remote server: shown in the workload's status and to the caller. */
export class UpstreamAuthError extends Error {
	override readonly name = 'UpstreamAuthError';

	/** Set while the proxy retries on its own: when the next attempt is due. */
	readonly retryAfterSeconds: number | undefined;
	/** The authorization server could not be read (an outage to wait out), rather than refused. */
	readonly unreachable: boolean;

	constructor(message: string, options: { retryAfterSeconds?: number; unreachable?: boolean } = {}) {
		super(boundedReason(message));
		this.retryAfterSeconds = options.retryAfterSeconds;
		this.unreachable = options.unreachable ?? false;
	}
}
