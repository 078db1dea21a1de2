/**
 * Where a skill comes from: what install and content accept as a reference, resolved to one
 * source and fetched into a folder.
 *
 * Dispatch (ToolHive's order, with local builds first for an exact tag): a git reference
 * (`git://`, `git+file://`, a GitHub tree URL) → git; the exact tag of a local build → that
 * build; text with `/`, `:` or `@` → OCI (a `namespace/name` without tag or digest is first
 * looked up in the registry catalog); a bare skill name → a local build of that name, else
 * the registry catalog; else 404.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { RegistrySkill } from '../../protocol/protocol.catalog.js';
import type { ProgressReporter } from '../context.js';
import type { RegistryClient } from '../oci/client.js';
import { formatReference, parseReference, ReferenceError, type OciReference } from '../oci/reference.js';
import type { HangarPaths } from '../store/paths.js';
import { SKILL_ANNOTATIONS } from './artifact.js';
import type { LocalBuild, SkillBuilds } from './builds.js';
import type { ExtractedFile } from './extract.js';
import { SKILL_FILE } from './files.js';
import { formatGitReference, gitSkillName, GitSkillSource, isCommit, looksLikeGit, parseGitReference, type GitReference } from './git.js';
import type { SkillFields } from './frontmatter.js';
import { OciSkillSource, type ResolvedArtifact } from './oci-source.js';
import type { SkillRecord } from './store.js';
import { blockingErrors, checkSkillDocument, skillNameProblem } from './validate.js';

/** Registry-name lookups (the registries service provides the real one). */
export interface SkillCatalog {
	findSkill(name: string): Promise<RegistrySkill | undefined>;
}

/** A source resolved far enough to know the skill's name (and for OCI and local builds, its digest). */
export type ResolvedSource =
	| { readonly kind: 'oci'; readonly name: string; readonly reference: OciReference; readonly artifact: ResolvedArtifact }
	| {
			readonly kind: 'git';
			readonly name: string;
			readonly reference: GitReference;
			/** A local repository allowed without development mode: its skill was installed from it in development mode. */
			readonly allowLocal?: boolean;
	  }
	| { readonly kind: 'local'; readonly name: string; readonly build: LocalBuild };

/** The digest a source pins without fetching it: OCI and local builds; a git source's commit is known only once fetched. */
export function knownDigest(source: ResolvedSource): string | undefined {
	return source.kind === 'oci' ? source.artifact.digest : source.kind === 'local' ? source.build.descriptor.digest : undefined;
}

/** A skill fetched into a folder and checked. */
export interface FetchedSkill {
	readonly name: string;
	readonly fields: SkillFields;
	/** The raw `SKILL.md`. */
	readonly skillMd: string;
	readonly files: ExtractedFile[];
	/** The reference as resolved: `registry/repo:tag`, `git://host/owner/repo@ref#path`, or the local tag. */
	readonly reference: string;
	readonly tag?: string;
	/** The pin: the OCI digest the reference resolved to, or the git commit. */
	readonly digest: string;
	/** A reference that reproduces exactly this content: `repo@digest`, `git://…@commit#path`. */
	readonly pinned: string;
	/** Whether re-resolving the reference can give different content (a tag or branch, not a digest or commit). */
	readonly movable: boolean;
	/** What install goes past: rules that affect neither safety nor loading, a git skill named otherwise than its folder. */
	readonly warnings: string[];
}

export class SkillSources {
	readonly oci: OciSkillSource;
	readonly git: GitSkillSource;

	constructor(
		paths: HangarPaths,
		client: RegistryClient,
		readonly builds: SkillBuilds,
		private readonly catalog: SkillCatalog,
		env: NodeJS.ProcessEnv = process.env,
	) {
		this.oci = new OciSkillSource(client, paths);
		this.git = new GitSkillSource(paths, env);
	}

	/** Resolves what a user typed (plus an optional version) to a source. */
	async resolve(text: string, version: string | undefined, signal: AbortSignal): Promise<ResolvedSource> {
		const reference = text.trim();
		if (looksLikeGit(reference)) return this.fromGit(parseGitReference(reference));
		const build = await this.builds.find(reference).catch((error: unknown) => {
			// Ambiguity among builds matters only for a bare name; OCI-looking text goes on.
			if (error instanceof HangarError && error.status === 409 && !/[/:@]/.test(reference)) throw error;
			return undefined;
		});
		if (build && (build.tag === reference || !/[/:@]/.test(reference))) return { kind: 'local', name: build.name, build };
		if (/[/:@]/.test(reference)) {
			if (isAmbiguous(reference)) {
				const listed = await this.catalog.findSkill(reference);
				if (listed) return this.fromCatalog(listed, version, signal);
			}
			const tagged = version && !/[:@]/.test(reference.split('/').at(-1)!) ? `${reference}:${version}` : reference;
			return this.fromOci(parseOci(tagged), signal);
		}
		const problem = skillNameProblem(reference);
		if (problem) throw HangarError.badRequest(problem, 'invalid_name');
		const listed = await this.catalog.findSkill(reference);
		if (listed) return this.fromCatalog(listed, version, signal);
		throw HangarError.notFound(
			`skill "${reference}" not found in local builds or the registry; install by OCI reference (registry/org/${reference}:tag) or git reference (git://host/owner/repo#path)`,
			'skill_not_found',
		);
	}

	/**
	 * Resolves a lock file's pin: the resolved reference at exactly the recorded digest (OCI)
	 * or commit (git), or a local build whose digest still matches.
	 */
	async resolvePinned(resolvedReference: string, digest: string, signal: AbortSignal): Promise<ResolvedSource> {
		if (looksLikeGit(resolvedReference)) return this.fromGit({ ...parseGitReference(resolvedReference), ref: digest });
		const build = await this.builds.find(resolvedReference).catch(() => undefined);
		if (build?.tag === resolvedReference) {
			if (build.descriptor.digest !== digest) throw HangarError.notFound(`local build ${resolvedReference} no longer has digest ${digest}`, 'digest_missing');
			return { kind: 'local', name: build.name, build };
		}
		const { registry, repository } = parseOci(resolvedReference);
		if (!/^sha(256|512):/.test(digest)) throw HangarError.badRequest(`lock entry ${resolvedReference} has an invalid digest ${digest}`, 'invalid_lock_file');
		return this.fromOci({ registry, repository, digest }, signal);
	}

	/** Fetches a resolved source into `into` (which must not exist) and checks the skill. */
	async fetch(source: ResolvedSource, into: string, signal: AbortSignal, progress?: ProgressReporter): Promise<FetchedSkill> {
		let files: ExtractedFile[];
		let identity: Pick<FetchedSkill, 'reference' | 'tag' | 'digest' | 'pinned' | 'movable'>;
		if (source.kind === 'oci') {
			files = await this.oci.extract(source.artifact, into, signal, progress);
			const { registry, repository, tag } = source.reference;
			identity = {
				reference: formatReference({ registry, repository, ...(tag !== undefined && { tag }) }),
				...(tag !== undefined && { tag }),
				digest: source.artifact.digest,
				pinned: formatReference({ registry, repository, digest: source.artifact.digest }),
				movable: source.reference.digest === undefined,
			};
		} else if (source.kind === 'git') {
			progress?.report(`fetching ${formatGitReference(source.reference)}`);
			const fetched = await this.git.fetch(source.reference, into, signal, progress, source.allowLocal);
			files = fetched.files;
			identity = {
				reference: formatGitReference(source.reference),
				...(source.reference.ref !== undefined && { tag: source.reference.ref }),
				digest: fetched.commit,
				pinned: formatGitReference(source.reference, fetched.commit),
				movable: !isCommit(source.reference.ref),
			};
		} else {
			files = await this.builds.extract(source.build, into, signal);
			identity = { reference: source.build.tag, tag: source.build.tag, digest: source.build.descriptor.digest, pinned: source.build.tag, movable: true };
		}
		const skillMd = await readFile(join(into, SKILL_FILE), 'utf8').catch(() => {
			throw new HangarError(422, `${identity.reference} holds no SKILL.md`, 'invalid_skill');
		});
		// A git skill is named by its SKILL.md (ToolHive's rule); an artifact's name must match its repository.
		const named = source.kind === 'git';
		const check = await checkSkillDocument(skillMd, named ? undefined : source.name);
		const blocking = blockingErrors(check);
		if (blocking.length) throw new HangarError(422, `${identity.reference} is not a valid skill: ${blocking.join('; ')}`, 'invalid_skill');
		const name = named ? check.fields!.name! : source.name;
		const warnings = [...(check.advisory ?? [])];
		if (name !== source.name) warnings.push(`${identity.reference}: SKILL.md names the skill "${name}", not "${source.name}"; it is installed as "${name}"`);
		return { name, fields: check.fields!, skillMd, files, warnings, ...identity };
	}

	private async fromOci(reference: OciReference, signal: AbortSignal): Promise<ResolvedSource> {
		const artifact = await this.oci.resolve(reference, signal);
		const name = reference.repository.split('/').at(-1)!;
		const declared = artifact.annotations[SKILL_ANNOTATIONS.name];
		if (declared && declared !== name) {
			throw new HangarError(422, `${formatReference(reference)} holds skill "${declared}", but its repository is named "${name}"`, 'name_mismatch');
		}
		return { kind: 'oci', name, reference, artifact };
	}

	/** A git source, named after its folder until its SKILL.md gives the real name. */
	private fromGit(reference: GitReference): ResolvedSource {
		return { kind: 'git', name: gitSkillName(reference), reference };
	}

	/** A registry entry's package: OCI (pinned by digest when listed), else git. */
	private async fromCatalog(skill: RegistrySkill, version: string | undefined, signal: AbortSignal): Promise<ResolvedSource> {
		const packages = skill.packages ?? [];
		const oci = packages.find((entry) => entry.registryType === 'oci' && entry.identifier);
		if (oci) {
			const reference = parseOci(oci.identifier!);
			const pinned = oci.digest && !reference.digest ? { ...reference, digest: oci.digest } : reference;
			return this.fromOci(version && !reference.tag && !reference.digest ? { ...pinned, tag: version } : pinned, signal);
		}
		const git = packages.find((entry) => entry.registryType === 'git' && entry.url);
		if (git) {
			const url = git.url!.replace(/^https?:\/\//, '').replace(/\.git$/, '').replace(/\/+$/, '');
			const ref = git.commit ?? git.ref;
			return this.fromGit(parseGitReference(`git://${url}${ref ? `@${ref}` : ''}${git.subfolder ? `#${git.subfolder}` : ''}`));
		}
		throw new HangarError(422, `registry skill ${skill.namespace ? `${skill.namespace}/` : ''}${skill.name} has no installable package`, 'no_package');
	}
}

/**
 * `source`, allowed to read its local repository when `record` (the installed skill it would
 * replace) was installed from that same repository: the development-mode decision of the install
 * holds for the skill's later sync and upgrade. A lock file cannot grant it: it comes from the
 * project, the record from this machine.
 */
export function withRecordedAllowance(source: ResolvedSource, record: SkillRecord | undefined): ResolvedSource {
	if (source.kind !== 'git' || source.reference.host || !record?.allow_local || !looksLikeGit(record.reference)) return source;
	return parseGitReference(record.reference).repository === source.reference.repository ? { ...source, allowLocal: true } : source;
}

function parseOci(text: string): OciReference {
	try {
		return parseReference(text);
	} catch (error) {
		throw HangarError.badRequest(`invalid reference: ${(error as ReferenceError).message}`, 'invalid_reference');
	}
}

/** `namespace/name` without a tag, a digest or a port: a registry name as much as an OCI repository. */
function isAmbiguous(text: string): boolean {
	return /^[^/:@]+\/[^/:@]+$/.test(text);
}
