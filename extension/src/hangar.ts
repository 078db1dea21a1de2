/** What the commands share: the daemon, the views they refresh, the read-only documents. */
import type { DaemonSupervisor } from './daemon.js';
import type { ReadOnlyDocuments } from './documents.js';
import type { RegistryView } from './views/registry.js';
import type { SkillsView } from './views/skills.js';
import type { WorkloadsView } from './views/workloads.js';

export interface Hangar {
	readonly daemon: DaemonSupervisor;
	readonly documents: ReadOnlyDocuments;
	readonly skills: SkillsView;
	readonly workloads: WorkloadsView;
	readonly registry: RegistryView;
}
