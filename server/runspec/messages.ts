/**
 * The IPC messages between the workloads service and a proxy process it spawned: the service
 * sends secret header values once (`configure`), the proxy answers `ready` or why it `failed`.
 */
export type LaunchMessage = { type: 'configure'; headers: Record<string, string> };
export type ProxyReport = { type: 'ready'; port: number } | { type: 'failed'; message: string };
