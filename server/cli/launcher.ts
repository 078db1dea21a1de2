/**
 * `hangar`'s entry point (the package's `bin`, and what proxies are spawned with): runs the
 * bundle through its own loader (bundleLoader.ts), its files compiled with a code cache
 * (codeCache.ts). scripts/bundle.mjs builds this file into dist/server/cli/hangar.cjs, CommonJS
 * so that Node's ESM loader is not started at all, and gives it the bundle's hash as
 * `BUNDLE_HASH`.
 */
import { join } from 'node:path';
import { resolvePaths } from '../store/paths.js';
import { runBundle } from './bundleLoader.js';
import { compileWithCache } from './codeCache.js';

declare const BUNDLE_HASH: string;

runBundle(join(__dirname, 'bundle'), compileWithCache(join(resolvePaths().cache, 'v8'), BUNDLE_HASH));
