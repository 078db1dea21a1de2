/**
 * `hangar version`: Hangar's version and the container engine in use, as the daemon's
 * `system/version` answers them. `main.ts` runs it without the command tree when
 * called as `hangar version [--json]`.
 */
import { DockerRuntime } from '../runtime/docker.js';
import { reportEngine } from '../runtime/runtime.js';
import { VERSION, VERSION_LINE } from '../version.js';

export async function printVersion(json: boolean): Promise<void> {
	const runtime = await reportEngine(new DockerRuntime());
	if (json) return void process.stdout.write(`${JSON.stringify({ version: `v${VERSION}`, runtime })}\n`);
	const engine = 'error' in runtime ? `engine: none answers (${runtime.error})` : `engine: ${runtime.name} ${runtime.version ?? ''} at ${runtime.address} (${runtime.found_by})`;
	process.stdout.write(`${VERSION_LINE}\n${engine}\n`);
}
