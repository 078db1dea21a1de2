/**
 * The workload rows of the operation table, bound to the workloads service.
 */
import {
	ApproveWorkloadTools,
	CreateWorkload,
	DeleteWorkload,
	DeleteWorkloads,
	ExportWorkload,
	GetWorkload,
	GetWorkloadLogs,
	GetWorkloadProxyLogs,
	GetWorkloadStats,
	GetWorkloadStatus,
	GetWorkloadTools,
	ListWorkloads,
	RestartWorkload,
	RestartWorkloads,
	SignInWorkload,
	StopWorkload,
	StopWorkloads,
	UpdateWorkload,
} from '../../protocol/protocol.workloads.js';
import type { RunConfig } from '../../protocol/runConfig.js';
import { implement, type Implementation } from '../dispatch.js';
import type { WorkloadService } from './service.js';

export function workloadImplementations(workloads: WorkloadService): Implementation[] {
	return [
		implement(ListWorkloads, (params) => workloads.list(params)),
		implement(CreateWorkload, (params, context) => workloads.create(params, context)),
		implement(UpdateWorkload, (params, context) => workloads.update(params, context)),
		implement(GetWorkload, ({ name }) => workloads.get(name)),
		implement(ExportWorkload, async ({ name }) => (await workloads.export(name)) as RunConfig),
		implement(GetWorkloadStatus, async ({ name }) => ({ status: (await workloads.status(name)).status })),
		implement(GetWorkloadLogs, ({ name }) => workloads.logs(name)),
		implement(GetWorkloadProxyLogs, ({ name }) => workloads.proxyLogs(name)),
		implement(GetWorkloadStats, ({ name, window }, context) => workloads.stats(name, window, context)),
		implement(GetWorkloadTools, ({ name }) => workloads.tools(name)),
		implement(ApproveWorkloadTools, ({ name, tools, prompts }) => workloads.approveTools(name, { tools, prompts })),
		implement(SignInWorkload, ({ name, device, wait }, context) => workloads.signIn(name, { device, wait }, context)),
		implement(StopWorkload, async ({ name }) => {
			await workloads.stop(name);
			return null;
		}),
		implement(RestartWorkload, async ({ name }) => {
			await workloads.restart(name);
			return null;
		}),
		implement(DeleteWorkload, async ({ name }) => {
			await workloads.delete(name);
			return null;
		}),
		implement(StopWorkloads, async (selection) => {
			await workloads.stopMany(selection);
			return null;
		}),
		implement(RestartWorkloads, async (selection) => {
			await workloads.restartMany(selection);
			return null;
		}),
		implement(DeleteWorkloads, async (selection) => {
			await workloads.deleteMany(selection);
			return null;
		}),
	];
}
