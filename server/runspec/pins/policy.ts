/**
 * Which tool pinning policy a workload runs under: its own `tool_pinning`, else Hangar's global
 * default (`<config>/tool-pinning.json`, set with `hangar tools policy`), else `block`. Read by
 * the proxy when it starts and by the services when they report the pins.
 */
import { join } from 'node:path';
import type { ToolPinning } from '../../../protocol/runConfig.js';
import { JsonDocument } from '../../store/document.js';
import { jsonSchemaCheck } from '../../store/jsonSchema.js';
import { recordSchemas } from '../records.generated.js';
import type { PinningDefaults } from '../records.js';
import type { HangarPaths } from '../../store/paths.js';

export const DEFAULT_TOOL_PINNING: ToolPinning = 'block';


export class PinningDefault {
	private readonly document: JsonDocument<PinningDefaults>;

	constructor(paths: HangarPaths) {
		this.document = new JsonDocument(join(paths.config, 'tool-pinning.json'), { schema: jsonSchemaCheck<PinningDefaults>(recordSchemas.PinningDefaults), version: 1 }, () => ({}));
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
