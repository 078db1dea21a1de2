/**
 * Cedar decisions for one workload. The policy set is parsed once (`preparsePolicySet`) and
 * every decision reuses it (`statefulIsAuthorized`); the principal's entity is built once per
 * identity.
 *
 * Default deny, forbid wins (Cedar's own rules), and a decision during which any policy
 * fails to evaluate (an absent attribute, a type mismatch…) is a deny, as ToolHive decides:
 * guard optional attributes with `has`.
 *
 * Speed: Cedar gets only the attributes some policy reads (see policyReferences.ts), and a
 * decision depends on nothing else, so decisions are remembered by their inputs.
 */
import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import type { EntityJson, EntityUidJson, PolicyJson } from '@cedar-policy/cedar-wasm/nodejs';
import type { Identity } from '../chain.js';
import type { CedarConfig } from '../../../runspec/authzConfig.js';
import { claimAttributes, groupsOf, type Attributes } from './cedarEntities.js';
import { LruCache } from '../lru.js';
import { SESSION_POLICY, type CedarAction, type CedarResourceType, type Check } from './methodActions.js';
import { referenced, referencesOf, type References } from './policyReferences.js';

type Cedar = typeof import('@cedar-policy/cedar-wasm/nodejs');

export interface Decision {
	readonly allowed: boolean;
	/** The policies that decided, or what went wrong (for logs; never shown to clients). */
	readonly reason: string;
}

/** The principal of callers without a token, when a workload authorizes without authenticating. */
export const ANONYMOUS = 'anonymous';

const REMEMBERED_DECISIONS = 10_000;

interface Principal {
	readonly uid: EntityUidJson;
	readonly entity: EntityJson;
	/** The claims the context carries. */
	readonly context: Attributes;
	/** Everything of the principal a decision depends on. */
	readonly key: string;
}

export class CedarAuthorizer {
	private readonly principals = new WeakMap<Identity, Principal>();
	private readonly anonymous: Principal;
	private readonly decisions = new LruCache<string, Decision>(REMEMBERED_DECISIONS);
	/** `entities_json`'s entities, each with its key, worked out once. */
	private readonly preloaded: ReadonlyArray<readonly [string, EntityJson]>;

	private constructor(
		private readonly cedar: Cedar,
		private readonly policySetId: string,
		private readonly config: CedarConfig,
		private readonly references: References,
		private readonly server: EntityUidJson,
	) {
		this.anonymous = this.principal(ANONYMOUS, {}, []);
		this.preloaded = config.entities.map((entity) => [keyOf(entity.uid), entity] as const);
	}

	/** Loads Cedar and preparses the policies; `serverName` becomes every resource's parent `MCP::"<name>"`. */
	static async create(config: CedarConfig, serverName: string): Promise<CedarAuthorizer> {
		// Node 20's V8 can abort the process ("unreachable code" in the deoptimizer) when code that
		// inlined a call into WebAssembly is deoptimized during that call, which Cedar's answers
		// cause; not inlining those calls avoids it, for next to nothing.
		setFlagsFromString('--no-turbo-inline-js-wasm-calls');
		const cedar = await import('@cedar-policy/cedar-wasm/nodejs');
		const policies: Record<string, string> = Object.fromEntries(config.policies.map((policy, index) => [`policy${index}`, policy]));
		policies['hangar-session'] = SESSION_POLICY;
		const id = `hangar-${createHash('sha256').update(JSON.stringify(policies)).digest('hex').slice(0, 16)}`;
		const parsed = cedar.preparsePolicySet(id, { staticPolicies: policies });
		if (parsed.type === 'failure') throw new Error(`the policies do not parse: ${parsed.errors[0]?.message}`);
		const trees = config.policies.map((policy) => {
			const tree = cedar.policyToJson(policy);
			if (tree.type === 'failure') throw new Error(`a policy does not parse: ${tree.errors[0]?.message}`);
			return tree.json as PolicyJson;
		});
		return new CedarAuthorizer(cedar, id, config, referencesOf(trees), { type: 'MCP', id: serverName });
	}

	/** May `identity` (undefined: an anonymous caller) take the check's action on its resource? */
	check(identity: Identity | undefined, { action, type, id, attributes, args }: Check): Decision {
		return this.authorize(identity, action, type, id, attributes, args);
	}

	/** May `identity` (undefined: an anonymous caller) take `action` on the resource (`MCP`: the server itself)? */
	authorize(identity: Identity | undefined, action: CedarAction, type: CedarResourceType, id: string, attributes: Attributes, args?: Attributes): Decision {
		const principal = identity ? this.principalOf(identity) : this.anonymous;
		const resourceAttributes = referenced(attributes, this.references);
		const contextArgs = args && (this.references.wholeContext ? args : referenced(args, this.references));
		const key = `${principal.key}\n${action}\n${type}\n${JSON.stringify([id, resourceAttributes, contextArgs])}`;
		let decision = this.decisions.get(key);
		if (!decision) {
			// The session actions act on the server itself (`MCP::"<workload>"`), which has no parent.
			const resource = type === 'MCP' ? undefined : { type, id };
			decision = this.evaluate(principal, action, resource, resourceAttributes, contextArgs ? { ...principal.context, ...contextArgs } : principal.context);
			this.decisions.set(key, decision);
		}
		return decision;
	}

	/** `resource` undefined: the server itself. */
	private evaluate(principal: Principal, action: string, resource: EntityUidJson | undefined, attributes: Attributes, context: Attributes): Decision {
		let entities: EntityJson[] = [principal.entity, resource ? { uid: resource, attrs: attributes, parents: [this.server] } : { uid: this.server, attrs: attributes, parents: [] }];
		resource ??= this.server;
		if (this.config.entities.length) entities = this.withPreloaded(entities);
		const answer = this.cedar.statefulIsAuthorized({
			principal: principal.uid,
			action: { type: 'Action', id: action },
			resource,
			context,
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
			const groups = groupsOf(identity.claims, this.config.groupClaimName, this.config.roleClaimName);
			principal = this.principal(identity.subject, claimAttributes(identity.claims), groups);
			this.principals.set(identity, principal);
		}
		return principal;
	}

	private principal(subject: string, claims: Attributes, groups: readonly string[]): Principal {
		const uid = { type: 'Client', id: subject };
		const attributes = referenced(claims, this.references);
		const context = this.references.wholeContext ? claims : attributes;
		const parents = groups.map((group) => ({ type: this.config.groupEntityType, id: group }));
		const key = JSON.stringify([subject, attributes, groups, context === attributes ? 0 : context]);
		return { uid, entity: { uid, attrs: attributes, parents }, context, key };
	}

	/** The request's entities and `entities_json`'s; the request's win where both define one. */
	private withPreloaded(entities: EntityJson[]): EntityJson[] {
		const own = new Set(entities.map((entity) => keyOf(entity.uid)));
		const all = [...entities];
		for (const [key, entity] of this.preloaded) if (!own.has(key)) all.push(entity);
		return all;
	}
}

function keyOf(uid: EntityUidJson): string {
	const { type, id } = '__entity' in uid ? uid.__entity : uid;
	return `${type}::${JSON.stringify(id)}`;
}
