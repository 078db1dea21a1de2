/**
 * A proxy's local channel: the Unix socket (a named pipe on Windows) where it serves its
 * routes and the link to the aggregates of its group, reachable only by the user's own
 * processes (a socket of mode 0600; a pipe's default ACL lets others read, never write), and
 * where the workloads service asks it to stop where there are no POSIX signals.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';

/** The local-only route that makes a proxy stop as SIGTERM does. */
export const STOP_PATH = '/.hangar/stop';

/**
 * The proxy `pid`'s channel: `<data>/sockets/PID.sock`, or on Windows a pipe in the machine's
 * one pipe namespace, named after the data folder too so that two users (or two HANGAR_HOMEs)
 * never meet.
 */
export function localLinkPath(dataFolder: string, pid: number, platform: NodeJS.Platform = process.platform): string {
	if (platform !== 'win32') return posix.join(dataFolder, 'sockets', `${pid}.sock`);
	const folder = createHash('sha256').update(dataFolder.toLowerCase()).digest('hex').slice(0, 16);
	return `\\\\.\\pipe\\hangar-${folder}-${pid}`;
}

/** A Windows named pipe (no file to make, remove or chmod), not a Unix socket. */
export function isPipe(path: string): boolean {
	return /^[\\/]{2}[.?][\\/]pipe[\\/]/i.test(path);
}
