/**
 * The workload rows of the operation table, bound to the workloads service.
 */
import type { RunConfig } from '../../protocol/runConfig.js';
import { implement, type Implementation } from '../dispatch.js';
import type { WorkloadService } from './service.js';

export function workloadImplementations(workloads: WorkloadService): Implementation[] {
	return [
		implement('workloads/list', (params) => workloads.list(params)),
		implement('workloads/create', (params, context) => workloads.create(params, context)),
		implement('workloads/update', (params, context) => workloads.update(params, context)),
		implement('workloads/get', ({ name }) => workloads.get(name)),
		implement('workloads/export', async ({ name }) => (await workloads.export(name)) as RunConfig),
		implement('workloads/status', async ({ name }) => ({ status: (await workloads.status(name)).status })),
		implement('workloads/logs', ({ name }) => workloads.logs(name)),
		implement('workloads/proxyLogs', ({ name }) => workloads.proxyLogs(name)),
		implement('workloads/stats', ({ name, window }, context) => workloads.stats(name, window, context)),
		implement('workloads/tools', ({ name }) => workloads.tools(name)),
		implement('workloads/approveTools', ({ name, tools, prompts }) => workloads.approveTools(name, { tools, prompts })),
		implement('workloads/signIn', ({ name, device, wait }, context) => workloads.signIn(name, { device, wait }, context)),
		implement('workloads/stop', async ({ name }) => {
			await workloads.stop(name);
			return null;
		}),
		implement('workloads/restart', async ({ name }) => {
			await workloads.restart(name);
			return null;
		}),
		implement('workloads/delete', async ({ name }) => {
			await workloads.delete(name);
			return null;
		}),
		implement('workloads/stopMany', async (selection) => {
			await workloads.stopMany(selection);
			return null;
		}),
		implement('workloads/restartMany', async (selection) => {
			await workloads.restartMany(selection);
			return null;
		}),
		implement('workloads/deleteMany', async (selection) => {
			await workloads.deleteMany(selection);
			return null;
		}),
	];
}
