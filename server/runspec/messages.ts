/**
 * The messages between the workloads service and a proxy process it spawned, over the
 * process's IPC channel: secret header values go in, readiness (or why it failed) comes out.
 */
export type LaunchMessage = { type: 'configure'; headers: Record<string, string> };
export type ProxyReport = { type: 'ready'; port: number } | { type: 'failed'; message: string };
