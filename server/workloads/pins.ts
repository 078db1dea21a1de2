/**
 * The review side of tool pinning: each tool and prompt of a workload against its pin, as its
 * proxy last saw the server list them (runspec/pins), the approval that re-pins them, and the
 * line a drifted workload's status carries. The proxy picks an approval up from the store.
 */
import { HangarError } from '../../protocol/errors.js';
import type { PinnedDefinition, WorkloadPinsResult } from '../../protocol/protocol.workloads.js';
import { approve, reviewOf, type ItemReview } from '../runspec/pins/drift.js';
import { itemWord, type PinKind } from '../runspec/pins/fingerprint.js';
import { FLAG_RULES } from '../runspec/pins/flags.js';
import type { PinningDefault } from '../runspec/pins/policy.js';
import type { KindPins, WorkloadPins } from '../runspec/pins/store.js';
import type { StoredWorkload, WorkloadStore } from '../runspec/store.js';
import { invalid } from './fields.js';
import { liveProxy } from './liveProxy.js';

const KINDS: readonly PinKind[] = ['tools', 'prompts'];

function definitionOf(review: ItemReview): PinnedDefinition {
	const differs = review.state !== 'pinned';
	return {
		name: review.name,
		state: review.state,
		fingerprint: review.fingerprint,
		...(differs && review.pinned ? { pinned_fingerprint: review.pinned.fingerprint, pinned: review.pinned.definition } : {}),
		...(differs && review.current ? { current: review.current.definition } : {}),
		flags: ((review.current ?? review.pinned)?.flags ?? []).map((flag) => ({ rule: flag.rule, severity: FLAG_RULES[flag.rule].severity, detail: flag.detail, why: FLAG_RULES[flag.rule].why })),
		...(review.duplicate ? { duplicate: true } : {}),
	};
}

/** What a workload whose lists differ from its pins reports: the names, and its status line. */
export interface Drift {
	readonly names: string[];
	readonly context: string;
}

export function driftOf(name: string, pins: WorkloadPins | undefined): Drift | undefined {
	const drifted = KINDS.flatMap((kind) => reviewOf(pins?.[kind]).filter((review) => review.state !== 'pinned'));
	if (!drifted.length) return undefined;
	const described = drifted.map((review) => `${review.name} (${review.state})`).join(', ');
	return { names: drifted.map((review) => review.name), context: `tools drifted from their pins: ${described}; review with hangar tools diff ${name}` };
}

export class PinReview {
	constructor(
		private readonly store: WorkloadStore,
		private readonly defaults: PinningDefault,
	) {}

	async review(config: StoredWorkload): Promise<WorkloadPinsResult> {
		const [pins, proxy] = await Promise.all([this.store.pins.get(config.name), liveProxy(this.store, config.name)]);
		return {
			name: config.name,
			// A running proxy keeps the policy it started with; else the one it will start with.
			tool_pinning: proxy?.tool_pinning ?? (await this.defaults.of(config.tool_pinning)),
			tools: reviewOf(pins?.tools).map(definitionOf),
			prompts: reviewOf(pins?.prompts).map(definitionOf),
		};
	}

	/** Re-pins the items named (with neither list, every drifted one) as the server lists them now. */
	async approve(config: StoredWorkload, selection: { tools?: string[]; prompts?: string[] }): Promise<{ name: string; tools: string[]; prompts: string[] }> {
		const everything = !selection.tools && !selection.prompts;
		const approved: Record<PinKind, string[]> = { tools: [], prompts: [] };
		let failure: HangarError | undefined;
		await this.store.pins.change(config.name, (current) => {
			const next: WorkloadPins = { ...current };
			for (const kind of KINDS) {
				const names = everything ? undefined : (selection[kind] ?? []);
				const record: KindPins | undefined = current?.[kind];
				if (!record) {
					if (names?.length) failure = invalid(kind, `no ${itemWord(kind)} of ${config.name} has been listed through Hangar yet`);
					continue;
				}
				const outcome = approve(record, names, new Date().toISOString());
				if ('unknown' in outcome) failure = invalid(kind, `${itemWord(kind)} ${outcome.unknown} of ${config.name} has not changed since it was pinned`);
				else if ('duplicate' in outcome) failure = HangarError.conflict(`the server of ${config.name} lists the ${itemWord(kind)} ${outcome.duplicate} more than once; there is no one definition to approve`, 'duplicate_definition');
				else {
					next[kind] = outcome.record;
					approved[kind] = outcome.approved;
				}
				if (failure) return undefined;
			}
			return approved.tools.length || approved.prompts.length ? next : undefined;
		});
		if (failure) throw failure;
		return { name: config.name, ...approved };
	}
}
