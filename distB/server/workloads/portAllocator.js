/**
 * Proxy ports: free ports are drawn at random from 10000–65535 (ToolHive's range), skipping
 * ports other workloads keep for themselves while stopped.
 */
import { createServer } from 'node:net';
export const PORT_MIN = 10_000;
export const PORT_MAX = 65_535;
const RANDOM_ATTEMPTS = 20;
/** True when nothing listens on `port` at `host` (checked by binding it for a moment). */
export function isPortFree(port, host) {
    return new Promise((resolve) => {
        const server = createServer();
        server.unref();
        server.once('error', () => resolve(false));
        server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
    });
}
/** A free port in the range that is not in `reserved`. */
export async function pickFreePort(host, reserved) {
    const span = PORT_MAX - PORT_MIN + 1;
    const candidate = () => PORT_MIN + Math.floor(Math.random() * span);
    for (let attempt = 0; attempt < RANDOM_ATTEMPTS; attempt++) {
        const port = candidate();
        if (!reserved.has(port) && (await isPortFree(port, host)))
            return port;
    }
    const start = candidate();
    for (let offset = 0; offset < span; offset++) {
        const port = PORT_MIN + ((start - PORT_MIN + offset) % span);
        if (!reserved.has(port) && (await isPortFree(port, host)))
            return port;
    }
    throw new Error(`no free port in ${PORT_MIN}-${PORT_MAX}`);
}
//# sourceMappingURL=portAllocator.js.map