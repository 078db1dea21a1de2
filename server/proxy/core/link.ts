/**
 * The link between an aggregate and a member's proxy (fronts/link.ts serves it, the aggregate's
 * backends/aggregate/link.ts opens it): one `GET /link` on the member's Unix socket per client
 * session, upgraded (HTTP/1.1 `Upgrade: hangar-link`) once the member's HTTP middleware let it
 * through, after which the connection carries JSON-RPC messages both ways, one per line, with no
 * HTTP framing to write or parse per message. What the member sends about a call in flight
 * (progress, a log, a request to the client) comes wrapped, `{"call": ID, "message": …}`, so the
 * aggregate ties it to its call as a Streamable HTTP client does by the POST it came on.
 */
import { asMessage, type JsonRpcMessage, type RequestId } from './jsonrpc.js';
import { parseJsonBounded } from '../../json.js';

export const LINK_PATH = '/link';
/** The protocol a link's `GET` asks to upgrade to. */
export const LINK_PROTOCOL = 'hangar-link';

/** A message of the member's about the call `call`. */
export interface CallMessage {
	readonly call: RequestId;
	readonly message: JsonRpcMessage;
}

/** A line's message, with the call it is about when wrapped; undefined when the line holds no JSON-RPC message. */
export function parseLine(line: string): { message: JsonRpcMessage; call?: RequestId } | undefined {
	let value: unknown;
	try {
		value = parseJsonBounded(line);
	} catch {
		return undefined;
	}
	const wrapped = typeof value === 'object' && value !== null && 'call' in value && 'message' in value ? (value as { call: unknown; message: unknown }) : undefined;
	const message = asMessage(wrapped ? wrapped.message : value);
	if (!message) return undefined;
	if (!wrapped) return { message };
	return typeof wrapped.call === 'string' || typeof wrapped.call === 'number' ? { message, call: wrapped.call } : undefined;
}
