/**
 * `hangar build SCHEME://…` (an image for a package reference, built as `hangar run` would),
 * the runtime options `run` shares with it, and `hangar config runtime`: the per-scheme
 * defaults of those options.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import type { RuntimeConfig } from '../../../protocol/runConfig.js';
import { DEFAULT_GO_FINAL_IMAGE, DEFAULT_IMAGES } from '../../packages/baseImages.js';
import type { BuildPlan } from '../../packages/dockerfile.js';
import { SCHEMES, type Scheme } from '../../packages/reference.js';
import { addCommands, collect, printJson, type Cli, type CommandFactory } from '../cli.js';

export interface RuntimeOptions {
	runtimeImage?: string;
	runtimeAddPackage: string[];
	finalImage?: string;
	buildNetwork?: string;
	buildSecret: string[];
}

/** `--build-secret KIND=NAME` kinds → `runtime_config.build_secrets` fields. */
const BUILD_SECRET_KINDS = { npmrc: 'npmrc', 'index-url': 'index_url', 'ca-cert': 'ca_cert' } as const;

/** `--runtime-image`, `--runtime-add-package`, `--final-image`, `--build-network`. */
export function addRuntimeOptions(command: Command): Command {
	return command
		.option('--runtime-image <image>', 'npx://, uvx://: the base image of the build and runtime stages; go://: the Go toolchain image')
		.option('--runtime-add-package <package>', 'OS package added to the runtime stage with apt-get or apk (repeatable or comma-separated)', collect, [])
		.option('--final-image <image>', `go:// only: the image the server runs on (default ${DEFAULT_GO_FINAL_IMAGE})`)
		.option('--build-network <network>', "network of the build's steps, e.g. host where the engine's default network cannot reach the package registry")
		.option('--build-secret <kind=name>', "the build stage's npmrc, index-url or ca-cert from a Hangar secret (repeatable), e.g. npmrc=secret:corp-npmrc", collect, []);
}

/** `runtime_config` from the runtime options, or undefined when none is given. */
export function runtimeConfigOf(options: RuntimeOptions): RuntimeConfig | undefined {
	const packages = options.runtimeAddPackage.flatMap((value) => value.split(',')).filter(Boolean);
	const secrets = buildSecretsOf(options.buildSecret);
	const config: RuntimeConfig = JSON.parse(
		JSON.stringify({ builder_image: options.runtimeImage, additional_packages: packages.length ? packages : undefined, final_image: options.finalImage, build_network: options.buildNetwork, build_secrets: secrets }),
	);
	return Object.keys(config).length ? config : undefined;
}

/** `npmrc=secret:NAME` (or `npmrc=NAME`) values → `build_secrets`, undefined when none is given. */
function buildSecretsOf(values: readonly string[]): RuntimeConfig['build_secrets'] {
	if (!values.length) return undefined;
	const secrets: Record<string, string> = {};
	for (const value of values) {
		const match = /^([a-z-]+)=(?:secret:)?(.+)$/.exec(value);
		const field = match && (BUILD_SECRET_KINDS as Record<string, string>)[match[1]!];
		if (!field) throw new HangarError(400, `invalid --build-secret ${JSON.stringify(value)}: use KIND=secret:NAME with KIND one of ${Object.keys(BUILD_SECRET_KINDS).join(', ')}`);
		secrets[field] = match[2]!;
	}
	return secrets;
}

/** A package reference as the service must see it: a local Go directory made absolute. */
export function packageSource(source: string): string {
	const local = /^go:\/\/(\.\.?(\/.*)?)$/.exec(source);
	return local ? `go://${resolve(local[1]!)}` : source;
}

/** The Dockerfile and the build context, with the build stage's files (credentials) left out. */
export function describePlan(plan: BuildPlan): string {
	const files = Object.entries(plan.files).map(([path, content]) =>
		path.startsWith('hangar-build/') ? `#   ${path} (${Buffer.byteLength(content)} bytes, build stage only)` : `#   ${path}`,
	);
	if (plan.sourceDir) files.push(`#   src/ (a copy of ${plan.sourceDir})`);
	return `# image ${plan.tag}${plan.network ? ` (built on network ${plan.network})` : ''}\n# build context:\n#   Dockerfile\n${files.join('\n')}\n\n${plan.dockerfile}`;
}

function schemeOf(value: string): Scheme {
	if (!(SCHEMES as readonly string[]).includes(value)) throw new HangarError(400, `unknown scheme ${JSON.stringify(value)}: use npx, uvx or go`);
	return value as Scheme;
}

/** The per-scheme defaults, loaded on use: the workload commands load this module for its options. */
const defaults = async (cli: Cli) => new (await import('../../packages/defaults.js')).RuntimeDefaults(cli.environment.paths);

function build(program: Command, cli: Cli): Command {
	return addRuntimeOptions(
		program
			.command('build')
			.description('Build the image of an npm or PyPI package or a Go module (npx://, uvx://, go://) without running it')
			.argument('<source>', 'npx://PKG[@VERSION], uvx://PKG[@VERSION], go://MODULE[@VERSION] or go://./dir')
			.option('--tag <tag>', 'tag the image so (default: a tag derived from what goes into it)')
			.option('--dry-run', 'print the Dockerfile and the build context instead of building'),
	).action(async (source: string, options: RuntimeOptions & { tag?: string; dryRun?: boolean }) => {
		// Imported on use: the workload commands (`ls` among them) load this module for its options.
		const [{ PackageBuilder }, { SecretsService }, { DockerRuntime }] = await Promise.all([import('../../packages/builder.js'), import('../../secrets/service.js'), import('../../runtime/docker.js')]);
		const builder = new PackageBuilder(new DockerRuntime(), await defaults(cli), new SecretsService(cli.environment));
		const controller = new AbortController();
		process.once('SIGINT', () => controller.abort());
		const planned = await builder.plan(packageSource(source), runtimeConfigOf(options), controller.signal);
		const plan = options.tag ? { ...planned, tag: options.tag } : planned;
		if (options.dryRun) return void process.stdout.write(describePlan(plan));
		const progress = { begin() {}, end() {}, report: (message?: string) => message && process.stderr.write(`${message}\n`) };
		const built = await builder.ensure(plan, progress, controller.signal);
		process.stdout.write(`${built ? 'Built' : 'Already built:'} ${plan.tag} (${plan.pinned})\n`);
	});
}

function showRuntimeDefaults(runtime: Command, cli: Cli): Command {
	return runtime
		.command('show')
		.description('Show each scheme\'s build defaults')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const all = await (await defaults(cli)).all();
			if (options.json) return printJson(all);
			for (const scheme of SCHEMES) {
				const own = all[scheme];
				const image = own?.builder_image ?? `${DEFAULT_IMAGES[scheme]} (built-in)`;
				process.stdout.write(`${scheme}: runtime image ${image}${scheme === 'go' ? `, final image ${own?.final_image ?? `${DEFAULT_GO_FINAL_IMAGE} (built-in)`}` : ''}`);
				if (own?.additional_packages?.length) process.stdout.write(`, added packages ${own.additional_packages.join(' ')}`);
				if (own?.build_network) process.stdout.write(`, build network ${own.build_network}`);
				for (const [kind, name] of Object.entries(own?.build_secrets ?? {})) process.stdout.write(`, ${kind} from secret ${name}`);
				process.stdout.write('\n');
			}
		});
}

function setRuntimeDefaults(runtime: Command, cli: Cli): Command {
	return addRuntimeOptions(runtime.command('set').description("Set a scheme's build defaults from the runtime options (replaces the previous ones)").argument('<scheme>', 'npx, uvx or go')).action(
		async (scheme: string, options: RuntimeOptions) => {
			const settings = runtimeConfigOf(options);
			if (!settings) throw new HangarError(400, 'give at least one runtime option, for example --runtime-image node:24-slim');
			await (await defaults(cli)).set(schemeOf(scheme), settings);
			process.stdout.write(`New ${scheme}:// builds use these settings unless a run gives its own.\n`);
		},
	);
}

function unsetRuntimeDefaults(runtime: Command, cli: Cli): Command {
	return runtime
		.command('unset')
		.description("Go back to a scheme's built-in build defaults")
		.argument('<scheme>', 'npx, uvx or go')
		.action(async (scheme: string) => {
			await (await defaults(cli)).set(schemeOf(scheme), undefined);
			process.stdout.write(`${scheme}:// builds use the built-in defaults.\n`);
		});
}

function config(program: Command, cli: Cli): Command {
	const config = program.command('config').description('Hangar-wide settings: the per-scheme defaults of package builds');
	const runtime = config.command('runtime').description('Defaults of the runtime options of npx://, uvx:// and go:// builds');
	addCommands(runtime, cli, [showRuntimeDefaults, setRuntimeDefaults, unsetRuntimeDefaults]);
	return config;
}

/** The area's top-level commands, in `--help` order. */
export const buildCommands: readonly CommandFactory[] = [build, config];
