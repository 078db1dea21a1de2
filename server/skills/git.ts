/**
 * Skills from git: `git://host/owner/repo[@ref][#path]` (ToolHive's grammar), GitHub tree
 * URLs (`https://github.com/OWNER/REPO/tree/REF/PATH`), and — in development mode only —
 * `git+file:///abs/repo[@ref][#path]`.
 *
 * A source is fetched the cheap way: one shallow fetch of the ref (a tag, branch or commit;
 * the default branch without one), blobs filtered and the checkout sparse when a path is
 * given, and the resolved commit pinned. Clones go over https with the token for their host
 * only (`GITHUB_TOKEN` for github.com, `GITLAB_TOKEN` for gitlab.com, `GIT_TOKEN` for any),
 * passed in the environment so it never shows in a process list. Hosts that resolve to a
 * private or loopback address are refused unless `HANGAR_DEV` is set, which also allows
 * plain http to them and local repositories. A local repository installed in development mode
 * stays allowed for that skill's later sync and upgrade (`allowLocal`, from its record).
 */
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { chmod, copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { HangarError } from '../../protocol/errors.js';
import type { ProgressReporter } from '../context.js';
import { isPrivateAddress, refusalOf } from '../net/addresses.js';
import type { HangarPaths } from '../store/paths.js';
import { DEFAULT_LIMITS, type ExtractedFile } from './extract.js';
import { readSkillTree, SKILL_FILE } from './files.js';
import { unportablePaths } from './portableNames.js';

export interface GitReference {
	/** `host[:port]`; empty for a local repository. */
	readonly host: string;
	/** `owner/repo` (more segments for nested groups), or the absolute path of a local repository. */
	readonly repository: string;
	readonly ref?: string;
	/** The skill's folder inside the repository. */
	readonly path?: string;
}

const REF_CHARS = /^[A-Za-z0-9._/-]+$/;
const CLONE_TIMEOUT_MS = 120_000;
const GITHUB_TREE = /^https:\/\/github\.com\/([^/]+)\/([^/]+?)(?:\.git)?(?:\/tree\/([^/]+)(?:\/(.+?))?)?\/?$/;

export function isDevelopmentMode(env: NodeJS.ProcessEnv): boolean {
	return env.HANGAR_DEV === '1' || env.HANGAR_DEV === 'true';
}

/** True when `text` is meant as a git source (it may still be malformed). */
export function looksLikeGit(text: string): boolean {
	return text.startsWith('git://') || text.startsWith('git+file://') || GITHUB_TREE.test(text);
}

/** Parses a git source; a 400 that says what is wrong when it is malformed. */
export function parseGitReference(text: string): GitReference {
	const github = GITHUB_TREE.exec(text);
	if (github) return checked({ host: 'github.com', repository: `${github[1]}/${github[2]}`, ref: github[3], path: github[4] }, text);
	const scheme = text.startsWith('git+file://') ? 'git+file://' : 'git://';
	let rest = text.slice(scheme.length);
	let path: string | undefined;
	const hash = rest.indexOf('#');
	if (hash >= 0) {
		path = rest.slice(hash + 1);
		rest = rest.slice(0, hash);
	}
	let ref: string | undefined;
	const at = rest.indexOf('@');
	if (at >= 0) {
		ref = rest.slice(at + 1);
		rest = rest.slice(0, at);
	}
	if (scheme === 'git+file://') {
		if (!rest.startsWith('/')) throw invalid(text, 'a git+file:// reference needs an absolute path');
		return checked({ host: '', repository: rest.replace(/\/+$/, ''), ref, path }, text);
	}
	const slash = rest.indexOf('/');
	const host = slash < 0 ? rest : rest.slice(0, slash);
	const repository = slash < 0 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
	if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host)) throw invalid(text, `invalid host "${host}"`);
	if (repository.split('/').length < 2 || repository.split('/').some((part) => !/^[A-Za-z0-9._-]+$/.test(part) || part === '..' || part === '.')) {
		throw invalid(text, 'the repository must be at least owner/repo');
	}
	return checked({ host, repository, ref, path }, text);
}

function checked(reference: { host: string; repository: string; ref?: string; path?: string }, text: string): GitReference {
	const { ref, path } = reference;
	if (ref !== undefined && (!REF_CHARS.test(ref) || ref.split('/').includes('..') || ref.startsWith('-'))) {
		throw invalid(text, `invalid ref "${ref}": letters, digits, ".", "_", "/" and "-" only`);
	}
	if (path !== undefined) {
		if (path === '' || path.startsWith('/') || path.includes('\\') || path.includes('\0') || path.split('/').includes('..')) {
			throw invalid(text, `invalid path "${path}": a relative path inside the repository, without ".."`);
		}
	}
	return {
		host: reference.host,
		repository: reference.repository,
		...(ref !== undefined && { ref }),
		...(path !== undefined && { path: path.replace(/\/+$/, '') }),
	};
}

function invalid(text: string, why: string): HangarError {
	return HangarError.badRequest(`invalid git reference ${text}: ${why}`, 'invalid_reference');
}

/** The canonical text of a reference; `commit` pins it. */
export function formatGitReference(reference: GitReference, commit?: string): string {
	const base = reference.host ? `git://${reference.host}/${reference.repository}` : `git+file://${reference.repository}`;
	const ref = commit ?? reference.ref;
	return `${base}${ref ? `@${ref}` : ''}${reference.path ? `#${reference.path}` : ''}`;
}

/** The skill's name: the last folder of the path, else the repository name without `.git`. */
export function gitSkillName(reference: GitReference): string {
	const last = (reference.path ?? reference.repository).split('/').at(-1)!;
	return reference.path ? last : last.replace(/\.git$/, '');
}

/** True for a full commit id (40 or 64 hex digits): a reference that cannot move. */
export function isCommit(ref: string | undefined): boolean {
	return ref !== undefined && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(ref);
}

export interface FetchedGitSkill {
	readonly commit: string;
	readonly files: ExtractedFile[];
}

export class GitSkillSource {
	constructor(
		private readonly paths: HangarPaths,
		private readonly env: NodeJS.ProcessEnv = process.env,
	) {}

	/**
	 * Fetches the skill folder of `reference` and copies its files into `into` (which must not
	 * exist). Returns the commit the ref resolved to.
	 */
	async fetch(reference: GitReference, into: string, signal: AbortSignal, progress?: ProgressReporter, allowLocal = false): Promise<FetchedGitSkill> {
		const target = await this.target(reference, allowLocal);
		const checkout = join(this.paths.cache, 'skills', 'git', `${Date.now()}-${randomBytes(4).toString('hex')}`);
		await mkdir(checkout, { recursive: true });
		try {
			const commit = await this.checkout(target, reference, checkout, signal, progress);
			const files = await moveSkill(reference.path ? join(checkout, ...reference.path.split('/')) : checkout, into, reference);
			return { commit, files };
		} finally {
			await rm(checkout, { recursive: true, force: true });
		}
	}

	/** The URL to fetch, the git configuration for it (token, pinned address) and its environment. */
	private async target(reference: GitReference, allowLocal: boolean): Promise<{ url: string; env: Record<string, string> }> {
		const development = isDevelopmentMode(this.env);
		if (!reference.host) {
			if (!development && !allowLocal) throw HangarError.badRequest('git+file:// sources are only allowed in development mode (HANGAR_DEV=1)', 'private_source');
			return { url: `file://${reference.repository}`, env: {} };
		}
		const hostname = reference.host.replace(/:\d+$/, '');
		const port = reference.host.includes(':') ? reference.host.slice(reference.host.lastIndexOf(':') + 1) : undefined;
		const addresses = await resolveHost(hostname);
		const metadata = addresses.find((address) => refusalOf(address, { private: true }));
		if (metadata) throw HangarError.badRequest(`git host ${hostname} resolves to the ${refusalOf(metadata, { private: true })} address ${metadata}, which no source may reach`, 'private_source');
		const privateAddress = addresses.find(isPrivateAddress);
		if (privateAddress && !development) {
			throw HangarError.badRequest(
				`git host ${hostname} resolves to the private or loopback address ${privateAddress}; set HANGAR_DEV=1 to allow it`,
				'private_source',
			);
		}
		const scheme = development && privateAddress ? 'http' : 'https';
		const url = `${scheme}://${reference.host}/${reference.repository}`;
		// git follows a redirect of the first request by default: to a host nobody checked. None is followed.
		const config: string[] = ['http.followRedirects=false'];
		// Pin the address checked above, so a second DNS answer cannot point the clone elsewhere.
		if (addresses[0] && isIP(hostname) === 0) {
			config.push(`http.curloptResolve=${hostname}:${port ?? (scheme === 'https' ? '443' : '80')}:${addresses[0]}`);
		}
		const token = tokenFor(hostname, this.env);
		if (token) config.push(`http.${scheme}://${reference.host}/.extraHeader=Authorization: Basic ${Buffer.from(`${token.user}:${token.token}`).toString('base64')}`);
		const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
		config.forEach((entry, index) => {
			const equals = entry.indexOf('=');
			env[`GIT_CONFIG_KEY_${index}`] = entry.slice(0, equals);
			env[`GIT_CONFIG_VALUE_${index}`] = entry.slice(equals + 1);
		});
		return { url, env };
	}

	private async checkout(
		target: { url: string; env: Record<string, string> },
		reference: GitReference,
		folder: string,
		signal: AbortSignal,
		progress?: ProgressReporter,
	): Promise<string> {
		const { simpleGit } = await import('simple-git');
		const env = { ...baseEnvironment(this.env), ...target.env };
		const git = simpleGit({
			baseDir: folder,
			abort: signal,
			timeout: { block: CLONE_TIMEOUT_MS },
			unsafe: { allowUnsafeConfigEnvCount: true },
			allowEnvironment: Object.keys(env),
			progress: ({ stage, progress: percent }) => progress?.report(`git: ${stage}`, percent),
		}).env(env);
		const started = Date.now();
		try {
			if (!reference.path && !isCommit(reference.ref)) {
				// The whole repository at a branch or tag: one shallow clone is the cheapest way.
				await git.clone(target.url, '.', ['--depth', '1', '--no-tags', ...(reference.ref ? ['--branch', reference.ref] : [])]);
			} else {
				// A folder, or a commit: fetch just that commit, and with a path only the blobs under it.
				await git.init();
				if (reference.path) await git.raw(['sparse-checkout', 'set', '--no-cone', `/${reference.path}/`]);
				await git.fetch([...(reference.path ? ['--filter=blob:none'] : []), '--depth', '1', '--no-tags', target.url, reference.ref ?? 'HEAD']);
				await git.raw(['checkout', '-q', '--detach', 'FETCH_HEAD']);
			}
			return (await git.revparse(['HEAD'])).trim();
		} catch (error) {
			throw gitError(error, formatGitReference(reference), signal, Date.now() - started >= CLONE_TIMEOUT_MS);
		}
	}
}

/** The process environment git runs with: no prompts, no terminal, English messages. */
function baseEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
	const keep = ['PATH', 'HOME', 'TMPDIR', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'];
	const result: Record<string, string> = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
	for (const name of keep) if (env[name] !== undefined) result[name] = env[name]!;
	return result;
}

/** The token for a host, each only where it belongs. */
function tokenFor(hostname: string, env: NodeJS.ProcessEnv): { user: string; token: string } | undefined {
	if (hostname === 'github.com' && env.GITHUB_TOKEN) return { user: 'x-access-token', token: env.GITHUB_TOKEN };
	if (hostname === 'gitlab.com' && env.GITLAB_TOKEN) return { user: 'oauth2', token: env.GITLAB_TOKEN };
	if (env.GIT_TOKEN) return { user: 'x-access-token', token: env.GIT_TOKEN };
	return undefined;
}

async function resolveHost(hostname: string): Promise<string[]> {
	if (isIP(hostname)) return [hostname];
	try {
		return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
	} catch (error) {
		throw new HangarError(502, `cannot resolve git host ${hostname} (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`, 'git_unreachable');
	}
}

/** Why git failed, as a status: 401, 429, 504, 499 or 502 (a repository, ref or path that does not resolve). */
function gitError(error: unknown, what: string, signal: AbortSignal, timedOut: boolean): HangarError {
	if (signal.aborted) return HangarError.cancelled(`fetching ${what}`);
	const message = (error as Error)?.message ?? String(error);
	const line = message.split('\n').find((text) => /fatal|error/i.test(text))?.trim() ?? message.split('\n')[0]!;
	if (timedOut || /timed? ?out/i.test(message)) return new HangarError(504, `fetching ${what} took longer than ${CLONE_TIMEOUT_MS / 1000} s`, 'git_timeout');
	if (/not found|couldn't find remote ref|does not appear to be a git repository|not our ref|no such remote ref|unadvertised object/i.test(message)) {
		// ToolHive answers a source it cannot resolve as an upstream failure, not a missing route.
		return new HangarError(502, `cannot resolve ${what}: ${line}`, 'git_not_found');
	}
	if (/Authentication failed|could not read Username|terminal prompts disabled|returned error: 40[13]/i.test(message)) {
		return new HangarError(401, `the git host refused access to ${what}; set GITHUB_TOKEN, GITLAB_TOKEN or GIT_TOKEN`, 'git_unauthorized');
	}
	if (/returned error: 30[1278]/i.test(message)) {
		return new HangarError(502, `the git host redirected the request for ${what}; redirects are not followed, so use the repository's own address`, 'git_redirect');
	}
	if (/returned error: 429/i.test(message)) return new HangarError(429, `the git host is rate-limiting requests for ${what}; try again later`, 'git_rate_limited');
	return new HangarError(502, `fetching ${what} failed: ${line}`, 'git_failed', { cause: error });
}

/**
 * Moves the regular files of a checked-out skill folder (a scratch checkout, deleted after)
 * into `into`. Symlinks and special files are refused (a skill has none), hidden files stay
 * behind, and the extraction limits apply.
 */
async function moveSkill(folder: string, into: string, reference: GitReference): Promise<ExtractedFile[]> {
	const tree = await readSkillTree(folder).catch((error: NodeJS.ErrnoException) => {
		if (error.code === 'ENOENT' || error.code === 'ENOTDIR') {
			throw new HangarError(502, `cannot resolve ${formatGitReference(reference)}: no folder ${reference.path ?? '/'} in the repository`, 'git_path_not_found');
		}
		throw error;
	});
	const where = formatGitReference(reference);
	if (tree.unsupported.length) throw new HangarError(422, `${where}: symlinks and special files are not allowed: ${tree.unsupported.join(', ')}`, 'invalid_skill');
	if (!tree.files.some((file) => file.path === SKILL_FILE)) throw new HangarError(422, `${where} has no SKILL.md`, 'invalid_skill');
	const unportable = unportablePaths(tree.files.map((file) => file.path));
	if (unportable.length) throw new HangarError(422, `${where}: ${unportable.join('; ')} (in the repository)`, 'invalid_skill');
	if (tree.truncated) throw new HangarError(422, `${where} holds more than ${DEFAULT_LIMITS.maxFiles} files`, 'invalid_skill');
	const total = tree.files.reduce((sum, file) => sum + file.size, 0);
	const large = tree.files.find((file) => file.size > DEFAULT_LIMITS.maxFileBytes);
	if (large || total > DEFAULT_LIMITS.maxTotalBytes) throw new HangarError(422, `${where} is larger than a skill may be`, 'invalid_skill');
	await mkdir(dirname(into), { recursive: true });
	await mkdir(into, { mode: 0o755 });
	try {
		for (const file of tree.files) {
			const target = join(into, ...file.path.split('/'));
			await mkdir(dirname(target), { recursive: true, mode: 0o755 });
			await rename(file.absolute, target).catch(async (error: NodeJS.ErrnoException) => {
				if (error.code !== 'EXDEV') throw error;
				await copyFile(file.absolute, target);
			});
			await chmod(target, file.executable ? 0o755 : 0o644);
		}
	} catch (error) {
		await rm(into, { recursive: true, force: true });
		throw error;
	}
	return tree.files.map((file) => ({ path: file.path, size: file.size, executable: file.executable }));
}
