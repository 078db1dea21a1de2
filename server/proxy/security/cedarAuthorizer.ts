/**
 * Cedar decisions for one workload. The policy set is parsed once (`preparsePolicySet`) and
 * every decision reuses it (`statefulIsAuthorized`); the principal's entity is built once per
 * identity.
 *
 * Default deny, forbid wins (Cedar's own rules), and a decision during which any policy
 * fails to evaluate (an absent attribute, a type mismatch…) is a deny, as ToolHive decides:
 * guard optional attributes with `has`.
 */
import { createHash } from 'node:crypto';
import type { EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import type { Identity } from '../chain.js';
import type { CedarConfig } from './authzConfig.js';
import { claimAttributes, groupsOf, type Attributes } from './cedarEntities.js';

type Cedar = typeof import('@cedar-policy/cedar-wasm/nodejs');

export type CedarAction = 'call_tool' | 'get_prompt' | 'read_resource';
export type CedarResourceType = 'Tool' | 'Prompt' | 'Resource';

export interface Decision {
	readonly allowed: boolean;
	/** The policies that decided, or what went wrong (for logs; never shown to clients). */
	readonly reason: string;
}

/** The principal of callers without a token, when a workload authorizes without authenticating. */
export const ANONYMOUS = 'anonymous';

interface Principal {
	readonly uid: EntityUidJson;
	readonly entity: EntityJson;
	readonly claims: Attributes;
}

export class CedarAuthorizer {
	private readonly principals = new WeakMap<Identity, Principal>();
	private readonly anonymous: Principal;
	private readonly preloadedKeys: ReadonlySet<string>;

	private constructor(
		private readonly cedar: Cedar,
		private readonly policySetId: string,
		private readonly config: CedarConfig,
		private readonly server: EntityUidJson,
	) {
		const uid = { type: 'Client', id: ANONYMOUS };
		this.anonymous = { uid, entity: { uid, attrs: {}, parents: [] }, claims: {} };
		this.preloadedKeys = new Set(config.entities.map((entity) => keyOf(entity.uid)));
	}

	/** Loads Cedar and preparses the policies; `serverName` becomes every resource's parent `MCP::"<name>"`. */
	static async create(config: CedarConfig, serverName: string): Promise<CedarAuthorizer> {
		const cedar = await import('@cedar-policy/cedar-wasm/nodejs');
		const policies = Object.fromEntries(config.policies.map((policy, index) => [`policy${index}`, policy]));
		const id = `hangar-${createHash('sha256').update(JSON.stringify(policies)).digest('hex').slice(0, 16)}`;
		const parsed = cedar.preparsePolicySet(id, { staticPolicies: policies });
		if (parsed.type === 'failure') throw new Error(`the policies do not parse: ${parsed.errors[0]?.message}`);
		return new CedarAuthorizer(cedar, id, config, { type: 'MCP', id: serverName });
	}

	/** May `identity` (undefined: an anonymous caller) take `action` on the resource? */
	authorize(identity: Identity | undefined, action: CedarAction, type: CedarResourceType, id: string, attributes: Attributes, args?: Attributes): Decision {
		const principal = identity ? this.principalOf(identity) : this.anonymous;
		const resource: EntityUidJson = { type, id };
		let entities: EntityJson[] = [principal.entity, { uid: resource, attrs: attributes, parents: [this.server] }];
		if (this.config.entities.length) entities = this.withPreloaded(entities);
		const answer = this.cedar.statefulIsAuthorized({
			principal: principal.uid,
			action: { type: 'Action', id: action },
			resource,
			context: args ? { ...principal.claims, ...args } : principal.claims,
			preparsedPolicySetId: this.policySetId,
			entities,
		});
		if (answer.type === 'failure') return { allowed: false, reason: `evaluation failed: ${answer.errors.map((error) => error.message).join('; ')}` };
		const { decision, diagnostics } = answer.response;
		const [error] = diagnostics.errors;
		if (error) return { allowed: false, reason: `${error.policyId} failed to evaluate: ${error.error.message}` };
		if (decision === 'allow') return { allowed: true, reason: `permitted by ${diagnostics.reason.join(', ')}` };
		return { allowed: false, reason: diagnostics.reason.length ? `forbidden by ${diagnostics.reason.join(', ')}` : 'no policy permits it' };
	}

	private principalOf(identity: Identity): Principal {
		let principal = this.principals.get(identity);
		if (!principal) {
			const uid = { type: 'Client', id: identity.subject };
			const claims = claimAttributes(identity.claims);
			const parents = groupsOf(identity.claims, this.config.groupClaimName, this.config.roleClaimName).map((group) => ({ type: this.config.groupEntityType, id: group }));
			principal = { uid, entity: { uid, attrs: claims, parents }, claims };
			this.principals.set(identity, principal);
		}
		return principal;
	}

	/** The request's entities and `entities_json`'s; the request's win where both define one. */
	private withPreloaded(entities: EntityJson[]): EntityJson[] {
		const own = entities.map((entity) => keyOf(entity.uid));
		if (!own.some((key) => this.preloadedKeys.has(key))) return entities.concat(this.config.entities);
		const shadowed = new Set(own);
		return entities.concat(this.config.entities.filter((entity) => !shadowed.has(keyOf(entity.uid))));
	}
}

function keyOf(uid: EntityUidJson): string {
	const { type, id } = '__entity' in uid ? uid.__entity : uid;
	return `${type}::${JSON.stringify(id)}`;
}
