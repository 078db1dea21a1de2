/**
 * V8's optimising compiler in a proxy process: held off while the proxy starts, and until it
 * has answered enough requests to count as busy. V8's first optimisation maps about 3.6 MB of
 * the compiler's own code into the process, which keeps it for life; and most proxies spend
 * their lives idle after a client's handshake and `tools/list`, where a single long loop (the
 * module loader's path functions at start, the depth scan of a large `tools/list`) is enough
 * for V8 to optimise. A busy proxy is optimised as before, a hundred requests later.
 * (docs/benchmarks.md, "Memory per proxy".)
 */
import { setFlagsFromString } from 'node:v8';
import type { McpMiddleware } from '../chain.js';

/** The requests a proxy answers before V8 may optimise its code. */
export const REQUESTS_BEFORE_OPTIMISING = 100;

/** Keeps V8 from optimising until the middleware below lets it. */
export function holdOptimisingCompiler(): void {
	setFlagsFromString('--no-turbofan');
}

/** Counts the requests, and lets V8 optimise from the REQUESTS_BEFORE_OPTIMISING-th on. */
export function optimiseWhenBusy(): McpMiddleware {
	let answered = 0;
	return (call, next) => {
		if (++answered === REQUESTS_BEFORE_OPTIMISING) setFlagsFromString('--turbofan');
		return next(call);
	};
}
