/**
 * Where the workloads' run configurations are kept, and their names read from that folder
 * alone: shell completion runs at every TAB and has no use for the stores (store.ts) it would
 * otherwise load.
 */
import { join } from 'node:path';
import { documentNames } from '../store/names.js';
import type { HangarPaths } from '../store/paths.js';

/** `<state>/runconfigs`: one `<name>.json` per workload. */
export const runConfigFolder = (paths: HangarPaths): string => join(paths.state, 'runconfigs');

export const workloadNames = (paths: HangarPaths): Promise<string[]> => documentNames(runConfigFolder(paths));
