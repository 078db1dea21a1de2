/**
 * Hangar's OCI distribution client, over `fetch`.
 *
 * Manifests, indexes and blobs are pulled and pushed by the distribution spec; every manifest
 * and blob is checked against its digest before anyone uses it. Registries on a loopback
 * address (and those named in `HANGAR_INSECURE_REGISTRIES`) are spoken to over plain http,
 * as Docker does; the rest over https. Redirects are followed by hand so `Authorization`
 * never travels to another host. Referrers come from the referrers API, or from the
 * `sha256-<hex>` tag schema on registries that do not have it.
 */
import { BodyTooLarge, readCapped } from '../net/body.js';
import { createHash } from 'node:crypto';
import { HangarError } from '../../protocol/errors.js';
import { parseChallenges, reasonOf, RegistryAuth, repositoryScope } from './auth.js';
import { CredentialStore } from './credentials.js';
import { integrityError, registryStatusError, registryTransportError } from './errors.js';
import { canonicalJson, ImageIndex, MANIFEST_ACCEPT, MEDIA_TYPES, parseManifestDocument } from './media.js';
import { apiHost, hostName, isDigest } from './reference.js';
import { isLoopbackHost } from '../net/addresses.js';
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const USER_AGENT = 'hangar';
export class RegistryClient {
    auth;
    fetchImpl;
    timeoutMs;
    insecure;
    constructor(options = {}) {
        const env = options.env ?? process.env;
        this.fetchImpl = options.fetch ?? fetch;
        this.auth = new RegistryAuth(options.credentials ?? new CredentialStore(env), this.fetchImpl);
        this.timeoutMs = options.timeoutMs ?? (Number(env.HANGAR_OCI_TIMEOUT_MS) || 60_000);
        this.insecure = new Set((env.HANGAR_INSECURE_REGISTRIES ?? '').split(',').map((host) => host.trim()).filter(Boolean));
    }
    /** `http://` for loopback and configured insecure registries, `https://` otherwise. */
    baseUrl(registry) {
        const host = apiHost(registry);
        const plain = isLoopbackHost(hostName(host)) || this.insecure.has(registry) || this.insecure.has(host);
        return `${plain ? 'http' : 'https'}://${host}`;
    }
    /** Pulls a manifest or index by tag or digest and checks it against its digest. */
    async getManifest(repo, reference, signal) {
        const what = `${repo.repository}:${reference}`;
        return this.withDeadline(signal, repo, what, async (deadline) => {
            const response = await this.send(repo, `/manifests/${reference}`, {
                method: 'GET',
                headers: { Accept: MANIFEST_ACCEPT },
                actions: 'pull',
                what,
                signal: deadline.signal,
            });
            if (!response.ok)
                throw await failure(response, repo.registry, what);
            const bytes = await readBody(response, MAX_MANIFEST_BYTES, deadline, repo.registry, what);
            const digest = sha256(bytes);
            if (isDigest(reference) && reference !== digest) {
                throw integrityError(repo.registry, `manifest ${what} has digest ${digest}, not the digest asked for`);
            }
            const announced = response.headers.get('docker-content-digest');
            if (announced?.startsWith('sha256:') && announced !== digest) {
                throw integrityError(repo.registry, `manifest ${what} has digest ${digest}, not ${announced} as the registry announced`);
            }
            const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
            const document = parseManifestDocument(bytes, mediaType);
            if (!document)
                throw new HangarError(422, `${what} is not an OCI manifest or index`, 'invalid_artifact');
            return { bytes, digest, mediaType: mediaType || (document.kind === 'index' ? MEDIA_TYPES.index : MEDIA_TYPES.manifest), document };
        });
    }
    /** The digest a tag points to, without downloading the manifest (HEAD). */
    async resolve(repo, reference, signal) {
        if (isDigest(reference))
            return reference;
        const what = `${repo.repository}:${reference}`;
        const head = await this.withDeadline(signal, repo, what, (deadline) => this.send(repo, `/manifests/${reference}`, { method: 'HEAD', headers: { Accept: MANIFEST_ACCEPT }, actions: 'pull', what, signal: deadline.signal }));
        const announced = head.headers.get('docker-content-digest');
        if (head.ok && announced && isDigest(announced))
            return announced;
        if (!head.ok && head.status !== 405)
            throw await failure(head, repo.registry, what);
        // Some registries answer HEAD without a digest: pull the manifest and hash it.
        return (await this.getManifest(repo, reference, signal)).digest;
    }
    /**
     * A blob as a stream of chunks. The stream fails (after the last chunk) when the bytes do
     * not match the descriptor's size and digest, so a consumer commits nothing before it ends.
     */
    async *streamBlob(repo, descriptor, signal, onBytes) {
        const what = `blob ${descriptor.digest} of ${repo.repository}`;
        const deadline = new Deadline(signal, this.timeoutMs);
        try {
            const response = await this.send(repo, `/blobs/${descriptor.digest}`, { method: 'GET', actions: 'pull', what, signal: deadline.signal });
            if (!response.ok)
                throw await failure(response, repo.registry, what);
            const [algorithm] = descriptor.digest.split(':');
            const hash = createHash(algorithm);
            let size = 0;
            try {
                for await (const chunk of response.body) {
                    deadline.touch();
                    size += chunk.byteLength;
                    if (size > descriptor.size)
                        throw integrityError(repo.registry, `${what} is larger than the ${descriptor.size} bytes its descriptor declares`);
                    hash.update(chunk);
                    onBytes?.(chunk.byteLength);
                    yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
                }
            }
            catch (error) {
                throw registryTransportError(error, repo.registry, what, deadline.reason());
            }
            if (size !== descriptor.size)
                throw integrityError(repo.registry, `${what} has ${size} bytes, not ${descriptor.size}`);
            const digest = `${algorithm}:${hash.digest('hex')}`;
            if (digest !== descriptor.digest)
                throw integrityError(repo.registry, `${what} has digest ${digest}`);
        }
        finally {
            deadline.clear();
        }
    }
    async hasBlob(repo, digest, signal, actions = 'pull') {
        const what = `blob ${digest} of ${repo.repository}`;
        const response = await this.withDeadline(signal, repo, what, (deadline) => this.send(repo, `/blobs/${digest}`, { method: 'HEAD', actions, what, signal: deadline.signal }));
        if (response.ok)
            return true;
        if (response.status === 404)
            return false;
        throw await failure(response, repo.registry, what);
    }
    /** Uploads a blob unless the registry has it (monolithic POST then PUT). */
    async pushBlob(repo, bytes, signal) {
        const digest = sha256(bytes);
        if (await this.hasBlob(repo, digest, signal, 'pull,push'))
            return digest;
        const what = `upload of ${digest} to ${repo.repository}`;
        await this.withDeadline(signal, repo, what, async (deadline) => {
            const started = await this.send(repo, '/blobs/uploads/', { method: 'POST', actions: 'pull,push', what, signal: deadline.signal });
            if (started.status !== 202)
                throw await failure(started, repo.registry, what);
            await started.body?.cancel();
            const location = started.headers.get('location');
            if (!location)
                throw new HangarError(502, `registry ${repo.registry} started an upload without a Location`, 'registry_error');
            const url = new URL(location, `${this.baseUrl(repo.registry)}/v2/${repo.repository}/blobs/uploads/`);
            url.searchParams.set('digest', digest);
            const finished = await this.send(repo, url, {
                method: 'PUT',
                headers: { 'Content-Type': 'application/octet-stream' },
                body: bytes,
                actions: 'pull,push',
                what,
                signal: deadline.signal,
            });
            if (finished.status !== 201)
                throw await failure(finished, repo.registry, what);
            await finished.body?.cancel();
        });
        return digest;
    }
    /**
     * Uploads a manifest or index under a tag or its digest; returns its digest. A manifest with
     * a `subject` is also listed under the subject's fallback tag when the registry does not
     * announce referrers support (`OCI-Subject`).
     */
    async putManifest(repo, reference, bytes, mediaType, signal) {
        const digest = sha256(bytes);
        const what = `manifest ${repo.repository}:${reference}`;
        const response = await this.withDeadline(signal, repo, what, (deadline) => this.send(repo, `/manifests/${reference}`, {
            method: 'PUT',
            headers: { 'Content-Type': mediaType },
            body: bytes,
            actions: 'pull,push',
            what,
            signal: deadline.signal,
        }));
        if (response.status !== 201 && response.status !== 200)
            throw await failure(response, repo.registry, what);
        await response.body?.cancel();
        const announced = response.headers.get('docker-content-digest');
        if (announced && announced !== digest)
            throw integrityError(repo.registry, `stored ${what} as ${announced}, not ${digest}`);
        const document = parseManifestDocument(bytes, mediaType);
        const subject = document?.kind === 'index' ? document.index.subject : document?.manifest.subject;
        if (subject && !response.headers.get('oci-subject')) {
            await this.addFallbackReferrer(repo, subject.digest, { mediaType, digest, size: bytes.length, ...artifactFields(document) }, signal);
        }
        return digest;
    }
    /** Manifests whose `subject` is `digest`, from the referrers API or the tag-schema fallback. */
    async referrers(repo, digest, signal, artifactType) {
        const what = `referrers of ${digest}`;
        const query = artifactType ? `?artifactType=${encodeURIComponent(artifactType)}` : '';
        const response = await this.withDeadline(signal, repo, what, (deadline) => this.send(repo, `/referrers/${digest}${query}`, { method: 'GET', headers: { Accept: MEDIA_TYPES.index }, actions: 'pull', what, signal: deadline.signal }));
        let manifests;
        if (response.ok && (response.headers.get('content-type') ?? '').startsWith(MEDIA_TYPES.index)) {
            const index = ImageIndex.safeParse(await response.json().catch(() => undefined));
            if (!index.success)
                throw new HangarError(502, `registry ${repo.registry} sent an invalid referrers index`, 'registry_error');
            manifests = index.data.manifests;
        }
        else if (response.status === 404 || response.ok) {
            await response.body?.cancel();
            manifests = (await this.fallbackIndex(repo, digest, signal))?.manifests ?? [];
        }
        else {
            throw await failure(response, repo.registry, what);
        }
        return artifactType ? manifests.filter((manifest) => manifest.artifactType === artifactType) : manifests;
    }
    async fallbackIndex(repo, digest, signal) {
        try {
            const pulled = await this.getManifest(repo, fallbackTag(digest), signal);
            return pulled.document.kind === 'index' ? pulled.document.index : undefined;
        }
        catch (error) {
            if (error instanceof HangarError && error.status === 404)
                return undefined;
            throw error;
        }
    }
    async addFallbackReferrer(repo, subject, descriptor, signal) {
        const existing = await this.fallbackIndex(repo, subject, signal);
        const manifests = (existing?.manifests ?? []).filter((manifest) => manifest.digest !== descriptor.digest);
        const index = { schemaVersion: 2, mediaType: MEDIA_TYPES.index, manifests: [...manifests, descriptor] };
        await this.putManifest(repo, fallbackTag(subject), canonicalJson(index), MEDIA_TYPES.index, signal);
    }
    /** Runs one exchange under a deadline; failures without an answer become 502, 504 or 499. */
    async withDeadline(signal, repo, what, work) {
        const deadline = new Deadline(signal, this.timeoutMs);
        try {
            return await work(deadline);
        }
        catch (error) {
            throw registryTransportError(error, repo.registry, what, deadline.reason());
        }
        finally {
            deadline.clear();
        }
    }
    /**
     * One exchange with the registry: up-front authorisation when a challenge is known, one
     * retry after a 401 with the challenge met, and redirects followed by hand.
     */
    async send(repo, path, exchange) {
        const url = typeof path === 'string' ? new URL(`${this.baseUrl(repo.registry)}/v2/${repo.repository}${path}`) : path;
        const scope = repositoryScope(repo.repository, exchange.actions);
        let authorization = await this.auth.preemptive(repo.registry, scope, exchange.signal);
        for (let attempt = 0;; attempt++) {
            const response = await this.follow(url, exchange, authorization, repo.registry);
            if (response.status !== 401 || attempt > 0)
                return response;
            const header = response.headers.get('www-authenticate');
            if (!header)
                return response;
            await response.body?.cancel();
            if (authorization)
                this.auth.invalidate(repo.registry, scope);
            const next = await this.auth.authorize(repo.registry, scope, parseChallenges(header), exchange.signal);
            if (!next || next === authorization)
                return response;
            authorization = next;
        }
    }
    async follow(start, exchange, authorization, registry) {
        let url = start;
        let method = exchange.method;
        let body = exchange.body;
        for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
            const headers = { 'User-Agent': USER_AGENT, ...exchange.headers };
            // Credentials belong to the registry's origin only.
            if (authorization && url.origin === start.origin)
                headers.Authorization = authorization;
            let response;
            try {
                response = await this.fetchImpl(url, { method, headers, body, redirect: 'manual', signal: exchange.signal });
            }
            catch (error) {
                throw registryTransportError(error, registry, exchange.what, exchange.signal.aborted ? reasonOf(exchange.signal) : undefined);
            }
            const location = response.headers.get('location');
            if (![301, 302, 303, 307, 308].includes(response.status) || !location)
                return response;
            await response.body?.cancel();
            const next = new URL(location, url);
            if (url.protocol === 'https:' && next.protocol !== 'https:') {
                throw new HangarError(502, `registry ${registry} redirected ${exchange.what} from https to ${next.protocol}`, 'registry_error');
            }
            if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
                method = 'GET';
                body = undefined;
            }
            url = next;
        }
        throw new HangarError(502, `registry ${registry} redirected ${exchange.what} more than ${MAX_REDIRECTS} times`, 'registry_error');
    }
}
/** The tag under which a registry without the referrers API lists the referrers of `digest`. */
export function fallbackTag(digest) {
    return digest.replace(':', '-').slice(0, 128);
}
export function sha256(bytes) {
    return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
function artifactFields(document) {
    const source = document.kind === 'index' ? document.index : document.manifest;
    const artifactType = source.artifactType ?? (document.kind === 'manifest' ? document.manifest.config.mediaType : undefined);
    return { ...(artifactType && { artifactType }), ...(source.annotations && { annotations: source.annotations }) };
}
async function failure(response, registry, what) {
    const detail = await response.text().catch(() => '');
    return registryStatusError(response.status, registry, what, response.headers, registryErrorDetail(detail));
}
/** The first message of a distribution error body (`{"errors":[{"code","message"}]}`). */
function registryErrorDetail(body) {
    try {
        const first = JSON.parse(body).errors?.[0];
        return first ? [first.code, first.message].filter(Boolean).join(' ') : undefined;
    }
    catch {
        return undefined;
    }
}
async function readBody(response, limit, deadline, registry, what) {
    const declared = Number(response.headers.get('content-length'));
    if (declared > limit)
        throw integrityError(registry, `${what} is larger than ${limit} bytes`);
    try {
        return await readCapped(response.body, limit, () => deadline.touch());
    }
    catch (error) {
        throw error instanceof BodyTooLarge ? integrityError(registry, `${what} is larger than ${limit} bytes`) : error;
    }
}
/**
 * The caller's cancellation combined with an inactivity timeout: it fires when no response or
 * body chunk arrived for `timeoutMs`.
 */
class Deadline {
    caller;
    timeoutMs;
    controller = new AbortController();
    timer;
    onCancel = () => this.controller.abort(this.caller.reason);
    constructor(caller, timeoutMs) {
        this.caller = caller;
        this.timeoutMs = timeoutMs;
        if (caller.aborted)
            this.controller.abort(caller.reason);
        else
            caller.addEventListener('abort', this.onCancel, { once: true });
        this.touch();
    }
    get signal() {
        return this.controller.signal;
    }
    touch() {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.controller.abort(new DOMException('no answer in time', 'TimeoutError')), this.timeoutMs);
        this.timer.unref();
    }
    reason() {
        return this.controller.signal.aborted ? reasonOf(this.controller.signal) : undefined;
    }
    clear() {
        clearTimeout(this.timer);
        this.caller.removeEventListener('abort', this.onCancel);
    }
}
//# sourceMappingURL=client.js.map