/**
 * The bundle's files find each other without Node's module search. A file of the bundle
 * requires the others as `./name.js`, all in its one folder, so the path is that folder's and
 * the name; Node's search would stat each file and resolve symbolic links along its path, a few
 * per cent of `hangar ls`, which loads 50 of them. A request of any other shape, or from outside
 * the bundle, is resolved by Node as ever.
 */
import Module from 'node:module';
import { sep } from 'node:path';

interface ModuleResolver {
	_resolveFilename(request: string, parent: { filename?: string | null } | undefined, ...rest: unknown[]): string;
}

export function resolveBundleFilesDirectly(bundleDir: string): void {
	const within = bundleDir.endsWith(sep) ? bundleDir : `${bundleDir}${sep}`;
	const resolver = Module as unknown as ModuleResolver;
	const resolve = resolver._resolveFilename;
	resolver._resolveFilename = function (this: unknown, request, parent, ...rest) {
		if (parent?.filename?.startsWith(within) && /^\.\/[\w.-]+\.js$/.test(request)) return `${within}${request.slice(2)}`;
		return resolve.call(this, request, parent, ...rest);
	};
}
