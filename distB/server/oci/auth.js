/**
 * Registry authentication: the `WWW-Authenticate` challenges of the distribution spec.
 *
 * `Basic` sends the stored credentials. `Bearer realm=…,service=…,scope=…` asks the realm for
 * a token (anonymously, with Basic credentials, or by exchanging an identity token) and
 * caches it until shortly before it expires. Once a registry has challenged, later requests
 * for another repository fetch their token up front instead of taking another 401.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { HangarError } from '../../protocol/errors.js';
import { registryStatusError, registryTransportError } from './errors.js';
import { hostName } from './reference.js';
import { addressClass, isLoopbackHost, refusalOf } from '../net/addresses.js';
/** Parses `WWW-Authenticate`: one or more `Scheme key="value", …` challenges. */
export function parseChallenges(header) {
    const challenges = [];
    // A bare token starts a challenge; `key=value` or `key="value"` adds a parameter to it.
    const item = /\s*,?\s*([A-Za-z][\w.-]*)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*)))?/y;
    while (item.lastIndex < header.length) {
        const match = item.exec(header);
        if (!match || match[0] === '')
            break;
        const [, name, quoted, bare] = match;
        const current = challenges.at(-1);
        if (quoted === undefined && bare === undefined)
            challenges.push({ scheme: name.toLowerCase(), params: {} });
        else if (current)
            current.params[name.toLowerCase()] = quoted?.replace(/\\(.)/g, '$1') ?? bare;
    }
    return challenges;
}
/** A repository scope of the token service: `repository:org/skill:pull,push`. */
export function repositoryScope(repository, actions) {
    return `repository:${repository}:${actions}`;
}
/** Tokens are renewed this long before the registry says they expire. */
const EXPIRY_MARGIN_MS = 10_000;
const DEFAULT_TOKEN_SECONDS = 60;
export class RegistryAuth {
    credentials;
    fetchImpl;
    tokens = new Map();
    /** The last challenge each registry sent, to authorise new scopes without a 401 first. */
    challenges = new Map();
    constructor(credentials, fetchImpl = fetch) {
        this.credentials = credentials;
        this.fetchImpl = fetchImpl;
    }
    /** The `Authorization` header to send up front, when one is known or can be obtained. */
    async preemptive(registry, scope, signal) {
        const challenge = this.challenges.get(registry);
        if (!challenge)
            return undefined;
        return this.authorize(registry, scope, [challenge], signal);
    }
    /** Forgets a header the registry refused, so the next attempt gets a fresh one. */
    invalidate(registry, scope) {
        for (const key of this.tokens.keys())
            if (key.startsWith(`${registry}|`) && key.endsWith(`|${scope}`))
                this.tokens.delete(key);
    }
    /**
     * Answers challenges from a 401: the header to retry with, or undefined when no challenge
     * can be met (unknown scheme, Basic without credentials).
     */
    async authorize(registry, scope, challenges, signal) {
        const bearer = challenges.find((challenge) => challenge.scheme === 'bearer' && challenge.params.realm);
        const basic = challenges.find((challenge) => challenge.scheme === 'basic');
        const credential = await this.credentials.lookup(registry);
        if (bearer) {
            this.challenges.set(registry, bearer);
            if (credential?.registryToken)
                return `Bearer ${credential.registryToken}`;
            return this.bearerToken(registry, bearer, scope, credential, signal);
        }
        if (basic) {
            this.challenges.set(registry, basic);
            return credential?.username !== undefined && credential.password !== undefined
                ? basicHeader(credential.username, credential.password)
                : undefined;
        }
        return undefined;
    }
    async bearerToken(registry, challenge, scope, credential, signal) {
        const realm = challenge.params.realm;
        const service = challenge.params.service ?? '';
        const key = `${registry}|${realm}|${service}|${scope}`;
        const cached = this.tokens.get(key);
        if (cached && cached.expiresAt > Date.now())
            return cached.header;
        let realmUrl;
        try {
            realmUrl = new URL(realm);
        }
        catch {
            throw new HangarError(502, `registry ${registry} sent an invalid token realm`, 'registry_error');
        }
        // Credentials travel to the realm only over https, or to a realm on this machine.
        const secure = realmUrl.protocol === 'https:' || (realmUrl.protocol === 'http:' && isLoopbackHost(hostName(realmUrl.host)));
        if (!secure)
            throw new HangarError(502, `registry ${registry} sent a token realm that is not https: ${realm}`, 'registry_error');
        await checkRealmAddress(registry, realmUrl);
        const request = tokenRequest(realmUrl, service, scope, credential);
        let response;
        try {
            response = await this.fetchImpl(request.url, { ...request.init, signal, redirect: 'error' });
        }
        catch (error) {
            throw registryTransportError(error, registry, 'a token', signal.aborted ? reasonOf(signal) : undefined);
        }
        if (!response.ok) {
            await response.body?.cancel();
            throw registryStatusError(response.status, registry, `a token for ${scope}`, response.headers);
        }
        const body = (await response.json().catch(() => ({})));
        const token = body.token ?? body.access_token;
        if (!token)
            throw new HangarError(502, `the token service of registry ${registry} sent no token`, 'registry_error');
        const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_TOKEN_SECONDS;
        const header = `Bearer ${token}`;
        this.tokens.set(key, { header, expiresAt: Date.now() + seconds * 1000 - EXPIRY_MARGIN_MS });
        return header;
    }
}
/**
 * The outbound policy for a token realm: it may reach only what its registry reaches, so a
 * registry on the internet cannot send Hangar to this machine or the LAN (a realm on loopback
 * only for a registry on loopback; on a private address only for a registry on one).
 */
async function checkRealmAddress(registry, realm) {
    const classes = new Set((await addressesOf(hostName(registry), registry)).map(addressClass));
    const reach = { private: classes.has('loopback') || classes.has('private') };
    for (const address of await addressesOf(realm.hostname, registry)) {
        const refused = refusalOf(address, reach) ?? (addressClass(address) === 'loopback' && !classes.has('loopback') ? 'loopback' : undefined);
        if (refused)
            throw new HangarError(502, `registry ${registry} sent a token realm on a ${refused} address (${address}), which it may not lead to: ${realm.origin}`, 'registry_error');
    }
}
async function addressesOf(host, registry) {
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare))
        return [bare];
    try {
        return (await lookup(bare, { all: true, verbatim: true })).map((entry) => entry.address);
    }
    catch (error) {
        throw new HangarError(502, `cannot resolve ${host} for registry ${registry} (${error.code ?? 'lookup failed'})`, 'registry_unreachable');
    }
}
function tokenRequest(realm, service, scope, credential) {
    const url = new URL(realm);
    if (credential?.identityToken) {
        // OAuth2 refresh-token grant, as Docker does for identity tokens.
        const form = new URLSearchParams({ grant_type: 'refresh_token', service, scope, client_id: 'hangar', refresh_token: credential.identityToken });
        return { url, init: { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form } };
    }
    if (service)
        url.searchParams.set('service', service);
    url.searchParams.set('scope', scope);
    const headers = {};
    if (credential?.username !== undefined && credential.password !== undefined) {
        headers.Authorization = basicHeader(credential.username, credential.password);
    }
    return { url, init: { method: 'GET', headers } };
}
function basicHeader(username, password) {
    return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}
/** Why a combined signal fired: the caller's cancellation or a timeout. */
export function reasonOf(signal) {
    return signal.reason?.name === 'TimeoutError' ? 'timeout' : 'cancelled';
}
//# sourceMappingURL=auth.js.map