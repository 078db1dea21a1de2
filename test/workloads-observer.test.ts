/**
 * The observer's lists against deletions that land while a list is being made: a workload whose
 * run configuration was read but whose records were purged before its status was is gone, not
 * `unknown`. (Seen under load: a bulk delete's remote workloads finished while the list that
 * followed the 202 read them, and showed as "unknown: no status recorded".)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../server/runtime/runtime.js';
import { resolvePaths } from '../server/store/paths.js';
import { WorkloadStore, type StoredWorkload } from '../server/runspec/store.js';
import { WorkloadObserver } from '../server/workloads/observer.js';
import { createTestHome, type TestHome } from './support/home.js';

let home: TestHome;
let store: WorkloadStore;

beforeEach(async () => {
	home = await createTestHome();
	store = new WorkloadStore(resolvePaths(home.env));
});
afterEach(() => home.dispose());

/** A remote workload's configuration (no container: the observer asks the runtime nothing). */
function remote(name: string): StoredWorkload {
	return { name, remote_url: 'http://127.0.0.1:9/mcp', transport: 'streamable-http', created_at: new Date().toISOString(), restart_policy: 'no' };
}

async function addRemote(name: string): Promise<void> {
	expect(await store.configs.create(name, remote(name))).toBe(true);
	await store.statuses.change(name, () => ({ status: 'removing', updated_at: new Date().toISOString() }));
}

/** The store, with a deletion of `victim` finishing just before the observer reads `victim`'s status. */
function purgeDuringStatusRead(victim: string): void {
	const read = store.statuses.get.bind(store.statuses);
	store.statuses.get = async (name: string) => {
		if (name === victim) {
			await store.configs.delete(victim);
			await store.forgetRuntimeState(victim);
		}
		return read(name);
	};
}

const noRuntime = {} as Runtime;
const everyGroup = { exists: async () => true };

describe('the observer while workloads are deleted', () => {
	it('leaves out a workload purged between reading its configuration and its status', async () => {
		await addRemote('stays');
		await addRemote('goes');
		purgeDuringStatusRead('goes');
		const observer = new WorkloadObserver(store, noRuntime, everyGroup);
		const listed = await observer.listed({ all: true });
		expect(listed.map(({ summary }) => [summary.name, summary.status])).toEqual([['stays', 'removing']]);
	});

	it('still reports a workload with a configuration and no status record as unknown', async () => {
		await store.configs.create('bare', remote('bare'));
		const observer = new WorkloadObserver(store, noRuntime, everyGroup);
		const listed = await observer.listed({ all: true });
		expect(listed.map(({ summary }) => [summary.name, summary.status, summary.status_context])).toEqual([['bare', 'unknown', 'no status recorded']]);
	});
});
