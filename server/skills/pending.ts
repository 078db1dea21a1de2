/**
 * Where an install that did not finish leaves its traces: transaction journals (state) and
 * staging folders (cache). Every skill operation first finishes what a dead process left
 * (SkillInstaller.recover); this tells, without loading the installer, whether there is
 * anything to look at.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { HangarPaths } from '../store/paths.js';

export const journalFolder = (paths: HangarPaths): string => join(paths.state, 'skills', 'journal');

export const stagingFolder = (paths: HangarPaths): string => join(paths.cache, 'skills', 'staging');

/** Whether a journal or a staging folder exists (its process may be dead, or still at work). */
export async function hasPendingWork(paths: HangarPaths): Promise<boolean> {
	for (const folder of [journalFolder(paths), stagingFolder(paths)]) {
		if ((await readdir(folder).catch(() => [])).length > 0) return true;
	}
	return false;
}
