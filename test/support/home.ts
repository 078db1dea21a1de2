/** A throwaway HANGAR_HOME per test file, so tests never touch real state or each other. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestHome {
	readonly path: string;
	readonly env: NodeJS.ProcessEnv;
	dispose(): Promise<void>;
}

export async function createTestHome(prefix = 'hangar-test-'): Promise<TestHome> {
	const path = await mkdtemp(join(tmpdir(), prefix));
	return {
		path,
		env: { ...process.env, HANGAR_HOME: path, HANGAR_LOG: process.env.HANGAR_LOG ?? 'warn' },
		dispose: () => rm(path, { recursive: true, force: true }),
	};
}
