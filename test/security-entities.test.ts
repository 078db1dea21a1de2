/**
 * How claims and arguments become Cedar values, checked with Cedar itself (cedar-wasm): the
 * conversions policies rely on, and the escapes a claim or argument must not smuggle in.
 */
import { describe, expect, it } from 'vitest';
import { CedarAuthorizer } from '../server/proxy/chain/authorization/cedarAuthorizer.js';
import { argumentAttributes, cedarValue, claimAttributes, groupsOf } from '../server/proxy/chain/authorization/cedarEntities.js';
import { LruCache } from '../server/proxy/chain/lru.js';
import { referencesOf } from '../server/proxy/chain/authorization/policyReferences.js';

async function authorizer(...policies: string[]): Promise<CedarAuthorizer> {
	return CedarAuthorizer.create({ version: '1.0', policies, entities: [], groupClaimName: undefined, roleClaimName: undefined, groupEntityType: 'THVGroup' }, 'server');
}

describe('Cedar values', () => {
	it('keeps integers as Longs, makes other numbers decimals, arrays sets and objects records', async () => {
		expect(cedarValue(42)).toBe(42);
		expect(cedarValue(1.5)).toEqual({ __extn: { fn: 'decimal', arg: '1.5000' } });
		expect(cedarValue(1e300)).toBe('1e+300');
		expect(cedarValue([1, null, 'a'])).toEqual([1, 'a']);
		expect(cedarValue({ level: 3, tags: ['x'] })).toEqual({ level: 3, tags: ['x'] });
		const check = await authorizer('permit(principal, action, resource) when { resource.arg_count < 10 && resource.arg_ratio.lessThan(decimal("0.5")) && context.claim_org.level == 3 };');
		const allowed = (args: Record<string, unknown>) => {
			const attributes = argumentAttributes(args);
			return check.authorize({ subject: 's', claims: { org: { level: 3 } } }, 'call_tool', 'Tool', 't', attributes, attributes).allowed;
		};
		expect(allowed({ count: 3, ratio: 0.25 })).toBe(true);
		expect(allowed({ count: 30, ratio: 0.25 })).toBe(false);
		expect(allowed({ count: 3, ratio: 0.75 })).toBe(false);
	});

	it('never lets a claim pass for an entity reference or an extension call', async () => {
		const claims = claimAttributes({ sub: 'mallory', boss: { __entity: { type: 'Client', id: 'alice' } }, when: { __extn: { fn: 'ip', arg: '10.0.0.1' } } });
		expect(claims).toEqual({ claim_sub: 'mallory', claim_boss: {}, claim_when: {} });
		const check = await authorizer('permit(principal, action, resource) when { principal.claim_boss == Client::"alice" };');
		expect(check.authorize({ subject: 'mallory', claims: { boss: { __entity: { type: 'Client', id: 'alice' } } } }, 'call_tool', 'Tool', 't', {}).allowed).toBe(false);
	});

	it('gives complex arguments only as arg_<name>_present', () => {
		expect(argumentAttributes({ path: '/tmp', recursive: true, depth: 2, filter: { glob: '*' }, list: [1], none: null })).toEqual({
			arg_path: '/tmp',
			arg_recursive: true,
			arg_depth: 2,
			arg_filter_present: true,
			arg_list_present: true,
		});
		expect(argumentAttributes(undefined)).toEqual({});
	});
});

describe('groups', () => {
	it('reads the named claim (exact key, then dot path), else the first default claim present, plus roles', () => {
		expect(groupsOf({ 'realm_access.roles': ['exact'], realm_access: { roles: ['nested'] } }, 'realm_access.roles', undefined)).toEqual(['exact']);
		expect(groupsOf({ realm_access: { roles: ['nested'] } }, 'realm_access.roles', undefined)).toEqual(['nested']);
		expect(groupsOf({ groups: ['a'], roles: ['b'] }, undefined, undefined)).toEqual(['a']);
		expect(groupsOf({ 'cognito:groups': ['c'] }, 'missing', undefined)).toEqual(['c']);
		expect(groupsOf({ groups: ['a', 'b'], app_roles: ['b', 'admin'] }, undefined, 'app_roles')).toEqual(['a', 'b', 'admin']);
		expect(groupsOf({ groups: 'solo' }, undefined, undefined)).toEqual(['solo']);
		expect(groupsOf({ groups: [{ name: 'x' }, 7] }, undefined, undefined)).toEqual([]);
	});
});

describe('the attributes handed to Cedar', () => {
	const treeOf = async (policy: string) => {
		const cedar = await import('@cedar-policy/cedar-wasm/nodejs');
		const tree = cedar.policyToJson(policy);
		if (tree.type !== 'success') throw new Error('no parse');
		return tree.json;
	};

	it('are those the policies read, by any syntax; a policy using the whole context gets all of it', async () => {
		const references = referencesOf([
			await treeOf('permit(principal, action, resource) when { principal has claim_org.unit && context["claim_x-y"] == 1 && resource.arg_path like "/tmp/*" };'),
			await treeOf('forbid(principal, action, resource) when { {"claim_literal": 1}.claim_literal == 1 };'),
		]);
		expect([...references.attributes].sort()).toEqual(['arg_path', 'claim_literal', 'claim_org', 'claim_x-y', 'unit']);
		expect(references.wholeContext).toBe(false);
		expect(referencesOf([await treeOf('permit(principal, action, resource) when { context == {"arg_a": 1} };')]).wholeContext).toBe(true);
	});

	it('still decide as if every claim and argument were there', async () => {
		const check = await authorizer('permit(principal, action, resource) when { principal has claim_org.unit && principal.claim_org.unit == "eng" && context["claim_x-y"] == 1 };');
		const allowed = (claims: Record<string, unknown>) => check.authorize({ subject: 's', claims }, 'call_tool', 'Tool', 't', {}, {}).allowed;
		expect(allowed({ org: { unit: 'eng' }, 'x-y': 1, unrelated: ['a'] })).toBe(true);
		expect(allowed({ org: { unit: 'ops' }, 'x-y': 1 })).toBe(false);
		expect(allowed({ org: {}, 'x-y': 1 })).toBe(false);
		// The forbid compares the whole context: it is handed over whole, and matches only without extra claims.
		const strict = await authorizer('permit(principal, action, resource);', 'forbid(principal, action, resource) when { context == {"claim_x-y": 2} };');
		expect(strict.authorize({ subject: 's', claims: { 'x-y': 2 } }, 'call_tool', 'Tool', 't', {}, {}).allowed).toBe(false);
		expect(strict.authorize({ subject: 's', claims: { 'x-y': 2, other: 1 } }, 'call_tool', 'Tool', 't', {}, {}).allowed).toBe(true);
	});

	it('give the same decision when asked again, and a different one when an input that matters changes', async () => {
		const check = await authorizer('permit(principal, action, resource) when { resource.arg_n < 3 };');
		const decide = (n: number, noise: string) => {
			const args = argumentAttributes({ n, noise });
			return check.authorize({ subject: 's', claims: { noise } }, 'call_tool', 'Tool', 't', args, args).allowed;
		};
		expect([decide(1, 'a'), decide(1, 'b'), decide(5, 'a'), decide(1, 'c'), decide(5, 'b')]).toEqual([true, true, false, true, false]);
	});
});

describe('the caches of tokens and decisions', () => {
	it('keeps what is used, forgets what is not, and never holds more than its capacity', () => {
		const cache = new LruCache<string, number>(4);
		cache.set('used', 0);
		cache.set('unused', 0);
		for (let index = 0; index < 20; index++) {
			cache.set(`new ${index}`, index);
			expect(cache.get('used')).toBe(0); // one client's token, looked up on every call
		}
		expect(cache.get('unused')).toBeUndefined();
		const held = Array.from({ length: 20 }, (_, index) => `new ${index}`).filter((key) => cache.get(key) !== undefined);
		expect(held.length + 1).toBeLessThanOrEqual(4);
		cache.set('used', 1);
		expect(cache.get('used')).toBe(1);
		cache.delete('used');
		expect(cache.get('used')).toBeUndefined();
	});
});
