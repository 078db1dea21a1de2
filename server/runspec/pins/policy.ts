/**
 * Which tool pinning policy a workload runs under: its own `tool_pinning`, else Hangar's global
 * default (`<config>/tool-pinning.json`, set with `hangar tools policy`), else `block`. Read by
 * the proxy when it starts and by the services when they report the pins.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { ToolPinning } from '../../../protocol/runConfig.js';
import { JsonDocument } from '../../store/document.js';
import type { HangarPaths } from '../../store/paths.js';

export const DEFAULT_TOOL_PINNING: ToolPinning = 'block';

const PinningDefaults = z.object({ tool_pinning: ToolPinning.optional() });
type PinningDefaults = z.infer<typeof PinningDefaults>;

export class PinningDefault {
	private readonly document: JsonDocument<PinningDefaults>;

	constructor(paths: HangarPaths) {
		this.document = new JsonDocument(join(paths.config, 'tool-pinning.json'), { schema: PinningDefaults, version: 1 }, () => ({}));
	}

	/** The global default: the one set, else `block`. */
	async get(): Promise<ToolPinning> {
		return (await this.document.read()).tool_pinning ?? DEFAULT_TOOL_PINNING;
	}

	/** Sets the global default (undefined: back to `block`). Workloads with their own keep it. */
	async set(policy: ToolPinning | undefined): Promise<void> {
		await this.document.update(() => [policy ? { tool_pinning: policy } : {}, undefined]);
	}

	/** The policy of a workload whose run configuration says `own`. */
	async of(own: ToolPinning | undefined): Promise<ToolPinning> {
		return own ?? (await this.get());
	}
}
