/**
 * Reading, writing and removing client configuration files on disk: a missing file reads as empty,
 * a symlinked file is written through to its target, writes are atomic, an existing file
 * keeps its mode and a new one is 0600 in folders created 0700. Problems become errors that
 * name the file (and line), so users know what to fix.
 */
import { rm } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import { readTextIfExists, writeFileAtomic } from '../store/atomic.js';
import { confinedPath, realLocation } from '../store/project.js';
import { ConfigShapeError, ConfigSyntaxError } from './editing.js';

export interface ConfigText {
	readonly text: string;
	/** Where to write: the file itself, or the target of a symlink. */
	readonly writePath: string;
}

/**
 * Reads a configuration file; `confinedTo` (a project root) refuses a file that symlinks
 * lead outside that folder, so a cloned repository cannot steer Hangar's writes elsewhere.
 */
export async function readConfig(path: string, confinedTo?: string): Promise<ConfigText> {
	try {
		const writePath = confinedTo === undefined ? await realLocation(path) : await confinedPath(confinedTo, path);
		const text = (await readTextIfExists(writePath)) ?? '';
		return { text, writePath };
	} catch (error) {
		// A link out of the project is the project's fault: the 400 names the field that chose it.
		if (error instanceof HangarError && error.code === 'outside_project') {
			throw new HangarError(400, `invalid project_root: ${error.message}`, error.code);
		}
		if (error instanceof HangarError) throw error;
		throw new HangarError(500, `cannot read ${path}: ${(error as Error).message}`, 'client_config_unreadable');
	}
}

export async function writeConfig(config: ConfigText, text: string): Promise<void> {
	try {
		await writeFileAtomic(config.writePath, text, { mode: 0o600, dirMode: 0o700 });
	} catch (error) {
		throw new HangarError(500, `cannot write ${config.writePath}: ${(error as Error).message}`, 'client_config_unwritable');
	}
}

/** Removes a file Hangar wrote whole (one of a folder of one file per workload). */
export async function removeConfig(config: ConfigText): Promise<void> {
	try {
		await rm(config.writePath, { force: true });
	} catch (error) {
		throw new HangarError(500, `cannot remove ${config.writePath}: ${(error as Error).message}`, 'client_config_unwritable');
	}
}

/** A parse or shape problem of a user's file as a 400 naming the file and line; other errors pass. */
export function configProblem(path: string, error: unknown): unknown {
	const untouched = 'fix the file and try again (Hangar left it untouched)';
	if (error instanceof ConfigSyntaxError) {
		return new HangarError(400, `${path}:${error.line}:${error.column}: ${error.message}; ${untouched}`, 'client_config_invalid');
	}
	if (error instanceof ConfigShapeError) {
		return new HangarError(400, `${path}: ${error.message}; ${untouched}`, 'client_config_invalid');
	}
	return error;
}
