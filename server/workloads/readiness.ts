/**
 * Whether a registry entry can run on this machine, and precisely why not when it cannot,
 * found without starting anything: an image the engine has or whose registry answers; a
 * package whose registry has it and whose build images are at hand; a remote that answers.
 * What the entry needs from the user (required variables, secrets, a sign-in) is listed apart:
 * it decides whether the entry will work, not whether it can run here.
 */
import { HangarError } from '../../protocol/errors.js';
import type { ImageServer, RemoteServer } from '../../protocol/registryTypes.js';
import type { PackageBuilder } from '../packages/builder.js';
import { buildImageNextStep } from '../packages/dockerfile.js';
import { isPackageReference } from '../packages/reference.js';
import type { Runtime } from '../runtime/runtime.js';
import { unreachableReason } from './reachability.js';

export type Entry = { kind: 'image'; server: ImageServer } | { kind: 'remote'; server: RemoteServer };

export interface Readiness {
	/** `runs`: it can be started here; `cannot`: `reason` says why and `next` what to do. */
	readonly verdict: 'runs' | 'cannot';
	/** How it runs (`runs`), or why it cannot (`cannot`). */
	readonly reason: string;
	readonly next?: string;
	/** What the user must supply for the server to work: variables, secrets, a sign-in. */
	readonly needs: readonly string[];
}

/** Docker Hub's references name no host; their pulls go to this one. */
const DOCKER_HUB = 'registry-1.docker.io';

export class ReadinessCheck {
	/** Each registry host is probed once per check. */
	private readonly probes = new Map<string, Promise<string | undefined>>();

	constructor(
		private readonly runtime: Runtime,
		private readonly packages: PackageBuilder,
	) {}

	async check(entry: Entry, signal?: AbortSignal): Promise<Readiness> {
		const needs = needsOf(entry);
		const found = entry.kind === 'remote' ? await this.remote(entry.server, signal) : await this.image(entry.server.image ?? '', signal);
		return { ...found, needs };
	}

	private async remote(server: RemoteServer, signal?: AbortSignal): Promise<Omit<Readiness, 'needs'>> {
		const url = server.url ?? '';
		const unreachable = await unreachableReason(url, signal);
		if (unreachable) return { verdict: 'cannot', reason: unreachable, next: 'run it where that host can be reached (this machine has no route to it)' };
		return { verdict: 'runs', reason: `the remote server ${url} answers` };
	}

	private async image(image: string, signal?: AbortSignal): Promise<Omit<Readiness, 'needs'>> {
		if (isPackageReference(image)) return this.package(image, signal);
		if (await this.runtime.imageExists(image)) return { verdict: 'runs', reason: `the image ${image} is on this engine` };
		const host = registryHost(image);
		const unreachable = await this.probe(host, signal);
		if (unreachable) return { verdict: 'cannot', reason: `the image ${image} is not on this engine and cannot be pulled: ${unreachable}`, next: pullNextStep(image) };
		return { verdict: 'runs', reason: `the image ${image} is pulled from ${host} on the first run` };
	}

	private async package(image: string, signal?: AbortSignal): Promise<Omit<Readiness, 'needs'>> {
		const scheme = image.slice(0, image.indexOf(':'));
		let plan;
		try {
			plan = await this.packages.plan(image, undefined, signal, 'image', true);
		} catch (error) {
			if (!(error instanceof HangarError)) throw error;
			return { verdict: 'cannot', reason: `the package cannot be had: ${error.message}`, next: packageNextStep(scheme) };
		}
		if (await this.runtime.imageExists(plan.tag)) return { verdict: 'runs', reason: `${plan.pinned} is built (${plan.tag})` };
		for (const base of plan.baseImages) {
			if (await this.runtime.imageExists(base)) continue;
			const unreachable = await this.probe(registryHost(base), signal);
			if (unreachable) {
				return { verdict: 'cannot', reason: `${plan.pinned} is in its registry, but the build's image ${base} is not on this engine and cannot be pulled: ${unreachable}`, next: buildImageNextStep(scheme) };
			}
		}
		return { verdict: 'runs', reason: `${plan.pinned} is built on the first run (${plan.baseImages.join(', ')})` };
	}

	private probe(host: string, signal?: AbortSignal): Promise<string | undefined> {
		let probe = this.probes.get(host);
		if (!probe) this.probes.set(host, (probe = unreachableReason(`https://${host}/v2/`, signal)));
		return probe;
	}
}

/** The host an image is pulled from: its first path part when that names a host, else Docker Hub. */
export function registryHost(image: string): string {
	const slash = image.indexOf('/');
	const first = slash < 0 ? '' : image.slice(0, slash);
	if (first && (first.includes('.') || first.includes(':') || first === 'localhost')) return first === 'docker.io' ? DOCKER_HUB : first;
	return DOCKER_HUB;
}

/** What to do about an image this engine cannot pull. */
export function pullNextStep(image: string): string {
	return `load it into this engine (docker load -i FILE, or docker build -t ${image} .), or use an engine that can reach ${registryHost(image)} (DOCKER_HOST)`;
}

function packageNextStep(scheme: string): string {
	const where = scheme === 'npx' ? 'an npm registry this machine reaches (NPM_CONFIG_REGISTRY or registry= in ~/.npmrc)' : scheme === 'uvx' ? 'a Python index this machine reaches (UV_DEFAULT_INDEX or PIP_INDEX_URL)' : 'a Go module proxy this machine reaches (GOPROXY)';
	return `point Hangar at ${where}`;
}

/** Required variables and secrets, secret headers, and an OAuth sign-in, as the entry declares them. */
function needsOf(entry: Entry): string[] {
	const needs: string[] = [];
	for (const variable of entry.server.env_vars ?? []) {
		if (variable.required && variable.default === undefined) needs.push(`${variable.name} (${variable.secret ? 'a secret' : 'an environment variable'}, required)`);
		else if (variable.secret) needs.push(`${variable.name} (a secret, optional)`);
	}
	if (entry.kind === 'remote') {
		for (const header of entry.server.headers ?? []) if (header.secret || header.required) needs.push(`the ${header.name} header (${header.secret ? 'a secret' : 'a value'}${header.required ? ', required' : ', or sign in'})`);
		if (entry.server.oauth_config) needs.push('an OAuth sign-in (an account with the provider)');
	}
	return needs;
}
