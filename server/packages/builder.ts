/**
 * Images of package references, built once: `plan` resolves the version and derives the tag
 * from what goes into the image; `ensure` builds it unless the engine already has that tag.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { RuntimeConfig } from '../../protocol/runConfig.js';
import type { Progress } from '../context.js';
import type { Runtime } from '../runtime/runtime.js';
import { effectiveSettings, type RuntimeDefaults } from './defaults.js';
import { buildImageNextStep, planBuild, type BuildPlan } from './dockerfile.js';
import { parsePackageReference } from './reference.js';
import { resolveVersion } from './resolve.js';
import { readPackageConfig, withSecretConfig, type SecretPackageConfig } from './userConfig.js';

/** What a workload's creation asks of the builder: a plan, then the image. */
export type PackagePlanner = Pick<PackageBuilder, 'plan' | 'ensure'>;

export class PackageBuilder {
	constructor(
		private readonly runtime: Runtime,
		private readonly defaults: RuntimeDefaults,
		/** Hangar's secrets, for `build_secrets`; without them such a build is refused. */
		private readonly secrets?: { resolve(name: string): Promise<string> },
		private readonly env: NodeJS.ProcessEnv = process.env,
	) {}

	/**
	 * The build of `image` (a package reference) with the request's settings over the scheme's
	 * defaults; with `confirm`, the package's registry is asked even for an exact version.
	 */
	async plan(image: string, settings: RuntimeConfig | undefined, signal?: AbortSignal, field = 'image', confirm = false): Promise<BuildPlan> {
		const reference = parsePackageReference(image, field);
		const effective = effectiveSettings(settings, await this.defaults.get(reference.scheme));
		const config = withSecretConfig(readPackageConfig(this.env), await this.secretConfig(effective));
		const version = await resolveVersion(reference, config, signal, confirm);
		return planBuild({ reference, version, settings: effective, config });
	}

	/** The values of the settings' `build_secrets`, read from Hangar's secrets. */
	private async secretConfig(settings: RuntimeConfig): Promise<SecretPackageConfig> {
		const names = settings.build_secrets ?? {};
		const values: Record<string, string> = {};
		for (const [key, name] of Object.entries(names)) {
			if (!name) continue;
			if (!this.secrets) throw new HangarError(400, `invalid runtime_config.build_secrets.${key}: secrets cannot be read here`, 'invalid_params');
			try {
				values[key] = await this.secrets.resolve(name);
			} catch (error) {
				if (error instanceof HangarError && error.status === 404) {
					throw new HangarError(400, `invalid runtime_config.build_secrets.${key}: no secret named ${name} (hangar secret set ${name})`, 'invalid_params');
				}
				throw error;
			}
		}
		return { npmrc: values.npmrc, indexUrl: values.index_url, caCert: values.ca_cert };
	}

	/** Builds the plan's image unless the engine has it; true when it built. */
	async ensure(plan: BuildPlan, progress: Progress, signal: AbortSignal): Promise<boolean> {
		if (await this.runtime.imageExists(plan.tag)) return false;
		progress.report(`building ${plan.tag} for ${plan.pinned}`);
		const contextDir = await mkdtemp(join(tmpdir(), 'hangar-build-'));
		try {
			await writeContext(contextDir, plan);
			await this.runtime.buildImage({ contextDir, tag: plan.tag, network: plan.network }, progress, signal);
		} catch (error) {
			throw withBaseImageHint(error, plan);
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

/**
 * A build that failed at a stage's `FROM` could not have that image (here: not on the engine
 * and not pullable): the error says which image to choose instead, and how.
 */
function withBaseImageHint(error: unknown, plan: BuildPlan): unknown {
	if (!(error instanceof HangarError) || error.code !== 'build_failed') return error;
	const image = /at step \d+\/\d+ : FROM (\S+)/.exec(error.message)?.[1];
	if (!image) return error;
	return new HangarError(error.status, `${error.message}\nnext: ${buildImageNextStep(plan.pinned.slice(0, plan.pinned.indexOf(':')))}`, error.code, { cause: error });
}
