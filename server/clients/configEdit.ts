/**
 * What one sync changes on disk, planned before anything is written (so that the ledger can
 * be widened first): the new text of a client's configuration file or, for a client that
 * reads a folder of files with one server each (Continue's `.continue/mcpServers/`), of the
 * files Hangar keeps there, one per workload. Each file is edited by `reconcile`, which never
 * touches an entry Hangar did not write.
 */
import { configProblem, readConfig, removeConfig, writeConfig } from './configFile.js';
import { openEditor } from './editor.js';
import { reconcile, type Reconciliation } from './reconcile.js';
import type { ConfigShape } from './table.js';
import type { WorkloadEndpoint } from './workloads.js';

export interface ConfigEdit {
	/** Entries Hangar manages once the edit is written. */
	readonly managed: string[];
	/** Running workloads left out because an entry of that name is the user's own, and the file holding it. */
	readonly skipped: ReadonlyArray<{ readonly name: string; readonly path: string }>;
	readonly changed: boolean;
	write(): Promise<void>;
}

/** The edit of one configuration file. */
export async function editConfigFile(
	path: string,
	shape: ConfigShape,
	desired: readonly WorkloadEndpoint[],
	managed: ReadonlySet<string>,
	projectRoot?: string,
): Promise<ConfigEdit> {
	const config = await readConfig(path, projectRoot);
	const result = await reconciled(path, config.text, shape, desired, managed);
	return {
		managed: result.managed,
		skipped: result.skipped.map((name) => ({ name, path })),
		changed: result.text !== config.text,
		write: () => writeConfig(config, result.text),
	};
}

/** A folder of one file per workload. */
export interface WorkloadFiles {
	/** The files' path, with `*` for the workload's name. */
	readonly pattern: string;
	readonly shape: ConfigShape;
	/** What a new file holds before its entry. */
	readonly newFile: (workload: string) => string;
	readonly projectRoot?: string;
}

/**
 * The edit of a folder of one file per workload: a running workload's file written, and the
 * file of one that no longer runs removed once no entry is left in it.
 */
export async function editWorkloadFiles(
	files: WorkloadFiles,
	desired: readonly WorkloadEndpoint[],
	managed: ReadonlySet<string>,
): Promise<ConfigEdit> {
	const wanted = new Map(desired.map((workload) => [workload.name, workload]));
	const edits: ConfigEdit[] = [];
	for (const name of new Set([...wanted.keys(), ...managed])) {
		const path = fileOf(files.pattern, name);
		const workload = wanted.get(name);
		const config = await readConfig(path, files.projectRoot);
		// The file of a workload that no longer runs is gone already (the user removed it).
		if (!workload && config.text === '') continue;
		const ours = managed.has(name) ? new Set([name]) : new Set<string>();
		const result = await reconciled(path, config.text || files.newFile(name), files.shape, workload ? [workload] : [], ours);
		const emptied = !workload && (await openEditor(result.text, files.shape)).entries().size === 0;
		edits.push({
			managed: result.managed,
			skipped: result.skipped.map((skipped) => ({ name: skipped, path })),
			changed: emptied || result.text !== config.text,
			write: () => (emptied ? removeConfig(config) : writeConfig(config, result.text)),
		});
	}
	return {
		managed: edits.flatMap((edit) => edit.managed),
		skipped: edits.flatMap((edit) => edit.skipped),
		changed: edits.some((edit) => edit.changed),
		write: async () => {
			for (const edit of edits) if (edit.changed) await edit.write();
		},
	};
}

/** A workload's file: the pattern's last `*` (the project's own path may hold one) is its name. */
function fileOf(pattern: string, workload: string): string {
	const star = pattern.lastIndexOf('*');
	return `${pattern.slice(0, star)}${workload}${pattern.slice(star + 1)}`;
}

async function reconciled(
	path: string,
	text: string,
	shape: ConfigShape,
	desired: readonly WorkloadEndpoint[],
	managed: ReadonlySet<string>,
): Promise<Reconciliation> {
	return reconcile(text, shape, desired, managed).catch((error: unknown) => {
		throw configProblem(path, error);
	});
}
