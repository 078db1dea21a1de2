/**
 * Images of package references, built once: `plan` resolves the version and derives the tag
 * from what goes into the image; `ensure` builds it unless the engine already has that tag.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RuntimeConfig } from '../../protocol/runConfig.js';
import type { Progress } from '../context.js';
import type { Runtime } from '../runtime/runtime.js';
import { effectiveSettings, type RuntimeDefaults } from './defaults.js';
import { planBuild, type BuildPlan } from './dockerfile.js';
import { parsePackageReference } from './reference.js';
import { resolveVersion } from './resolve.js';
import { readPackageConfig } from './userConfig.js';

export class PackageBuilder {
	constructor(
		private readonly runtime: Runtime,
		private readonly defaults: RuntimeDefaults,
		private readonly env: NodeJS.ProcessEnv = process.env,
	) {}

	/** The build of `image` (a package reference) with the request's settings over the scheme's defaults. */
	async plan(image: string, settings: RuntimeConfig | undefined, signal?: AbortSignal, field = 'image'): Promise<BuildPlan> {
		const reference = parsePackageReference(image, field);
		const config = readPackageConfig(this.env);
		const version = await resolveVersion(reference, config, signal);
		return planBuild({ reference, version, settings: effectiveSettings(settings, await this.defaults.get(reference.scheme)), config });
	}

	/** Builds the plan's image unless the engine has it; true when it built. */
	async ensure(plan: BuildPlan, progress: Progress, signal: AbortSignal): Promise<boolean> {
		if (await this.runtime.imageExists(plan.tag)) return false;
		progress.report(`building ${plan.tag} for ${plan.pinned}`);
		const contextDir = await mkdtemp(join(tmpdir(), 'hangar-build-'));
		try {
			await writeContext(contextDir, plan);
			await this.runtime.buildImage({ contextDir, tag: plan.tag, network: plan.network }, progress, signal);
		} finally {
			await rm(contextDir, { recursive: true, force: true });
		}
		return true;
	}
}

/** The build context of a plan: its Dockerfile, its files, and a local module as `src/`. */
export async function writeContext(contextDir: string, plan: BuildPlan): Promise<void> {
	await writeFile(join(contextDir, 'Dockerfile'), plan.dockerfile);
	for (const [path, content] of Object.entries(plan.files)) {
		await mkdir(dirname(join(contextDir, path)), { recursive: true });
		await writeFile(join(contextDir, path), content, { mode: 0o600 });
	}
	if (plan.sourceDir) await cp(plan.sourceDir, join(contextDir, 'src'), { recursive: true, filter: (source) => !source.split('/').includes('.git') });
}
