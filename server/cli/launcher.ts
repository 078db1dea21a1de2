/**
 * `hangar`'s entry point (the package's `bin`, and what proxies are spawned with): lets the
 * bundle's files find each other directly (bundleFiles.ts) and turns on their code cache
 * (codeCache.ts), then runs the bundle. scripts/bundle.mjs builds this file into
 * dist/server/cli/hangar.cjs, CommonJS so that Node's ESM loader is not started at all, and gives
 * it the bundle's hash as `BUNDLE_HASH`.
 */
import { join } from 'node:path';
import { resolvePaths } from '../store/paths.js';
import { resolveBundleFilesDirectly } from './bundleFiles.js';
import { cacheCompiledCode } from './codeCache.js';

declare const BUNDLE_HASH: string;

const bundle = join(__dirname, 'bundle');
resolveBundleFilesDirectly(bundle);
cacheCompiledCode(bundle, join(resolvePaths().cache, 'v8'), BUNDLE_HASH);
require('./bundle/main.js');
