import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
	test: {
		testTimeout: 30_000,
		hookTimeout: 60_000,
		pool: 'forks',
		// Two cores: spawned daemons and servers do the work; more workers only contend.
		maxWorkers: 2,
		projects: [
			{ extends: true, test: { name: 'hangar', include: ['test/**/*.test.ts'] } },
			{
				// The extension's unit tests run against a stand-in for the `vscode` module.
				extends: true,
				test: { name: 'extension', include: ['extension/test/**/*.test.ts'] },
				resolve: { alias: { vscode: fileURLToPath(new URL('./extension/test/vscode-stub.ts', import.meta.url)) } },
			},
		],
	},
});
