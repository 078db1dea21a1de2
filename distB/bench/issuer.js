/**
 * A small OpenID issuer on 127.0.0.1 for the benchmarks (discovery and JWKS, RS256 and ES256
 * keys made by jose), as the tests' fixtures have: the proxy verifies its tokens for real.
 */
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
export const AUDIENCE = 'hangar-bench';
/** The claims of a typical access token. */
export const CLAIMS = { name: 'Rita Reader', email: 'rita@example.com', groups: ['readers', 'eng'], roles: ['viewer'], scope: 'openid mcp', azp: 'vscode' };
export async function startIssuer() {
    const keys = {
        RS256: await generateKeyPair('RS256', { extractable: true }),
        ES256: await generateKeyPair('ES256', { extractable: true }),
    };
    const jwks = { keys: await Promise.all(Object.entries(keys).map(async ([alg, pair]) => ({ ...(await exportJWK(pair.publicKey)), alg, kid: alg, use: 'sig' }))) };
    const server = createServer((request, response) => {
        response.setHeader('Content-Type', 'application/json');
        if (request.url === '/realms/bench/.well-known/openid-configuration')
            response.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/certs` }));
        else if (request.url === '/realms/bench/certs')
            response.end(JSON.stringify(jwks));
        else
            response.writeHead(404).end('{}');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${server.address().port}/realms/bench`;
    return {
        url,
        sign: (alg, sub, id) => new SignJWT(id ? { ...CLAIMS, jti: id } : CLAIMS)
            .setProtectedHeader({ alg, kid: alg })
            .setSubject(sub)
            .setIssuer(url)
            .setAudience(AUDIENCE)
            .setIssuedAt()
            .setExpirationTime('1h')
            .sign(keys[alg].privateKey),
        stop: () => server.close(),
    };
}
//# sourceMappingURL=issuer.js.map