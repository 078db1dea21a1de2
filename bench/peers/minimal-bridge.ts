/**
 * The floor of a stdio-to-HTTP MCP proxy built the way Hangar's is: node:http in front, one
 * Docker Engine attach to the container's stdio behind, request ids re-mapped so that several
 * clients can share the server (relay.ts). No sessions, no middleware, no SSE: what is left is
 * the cost any such proxy pays. Usage: `minimal-bridge CONTAINER_ID`; prints `listening on URL`.
 */
import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { serveRelay } from './relay.js';

const docker = new Docker();
const container = docker.getContainer(process.argv[2]!);
const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true });
const stdout = new PassThrough();
docker.modem.demuxStream(stream, stdout, new PassThrough().resume());

serveRelay('bridge', stdout, (line) => stream.write(line));
