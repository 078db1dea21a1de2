/**
 * `hangar`'s entry point (the package's `bin`, and what proxies are spawned with): turns on the
 * code cache of the bundle (codeCache.ts), then runs it. scripts/bundle.mjs builds this file
 * into dist/server/cli/hangar.cjs, CommonJS so that Node's ESM loader is not started at all, and
 * gives it the bundle's hash as `BUNDLE_HASH`.
 */
import { join } from 'node:path';
import { resolvePaths } from '../store/paths.js';
import { cacheCompiledCode } from './codeCache.js';

declare const BUNDLE_HASH: string;

cacheCompiledCode(join(__dirname, 'bundle'), join(resolvePaths().cache, 'v8'), BUNDLE_HASH);
require('./bundle/main.js');
