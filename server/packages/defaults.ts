/**
 * Hangar's per-scheme build defaults (`<config>/runtimes.json`, ToolHive's `runtime_configs`):
 * the runtime image, added packages and build settings a build of that scheme uses when the
 * request does not give its own. Set with `hangar config runtime set npx --runtime-image …`.
 */
import { join } from 'node:path';
import type { RuntimeConfig } from '../../protocol/runConfig.js';
import { recordSchemas } from '../runspec/records.generated.js';
import type { RuntimeDefaultsDocument } from '../runspec/records.js';
import type { HangarPaths } from '../store/paths.js';
import { JsonDocument } from '../store/document.js';
import { jsonSchemaCheck } from '../store/jsonSchema.js';
import type { Scheme } from './reference.js';

export class RuntimeDefaults {
	private readonly document: JsonDocument<RuntimeDefaultsDocument>;

	constructor(paths: HangarPaths) {
		this.document = new JsonDocument(join(paths.config, 'runtimes.json'), { schema: jsonSchemaCheck<RuntimeDefaultsDocument>(recordSchemas.RuntimeDefaultsDocument), version: 1 }, () => ({}));
	}

	async all(): Promise<Partial<Record<Scheme, RuntimeConfig>>> {
		return (await this.document.read()).runtime_configs ?? {};
	}

	async get(scheme: Scheme): Promise<RuntimeConfig | undefined> {
		return (await this.all())[scheme];
	}

	/** Replaces a scheme's defaults (undefined: the built-in ones). */
	async set(scheme: Scheme, config: RuntimeConfig | undefined): Promise<void> {
		await this.document.update((current) => {
			const configs = { ...(current.runtime_configs ?? {}) };
			if (config && Object.keys(config).length) configs[scheme] = config;
			else delete configs[scheme];
			return [{ runtime_configs: configs }, undefined];
		});
	}
}

/** The request's settings over the scheme's defaults, field by field. */
export function effectiveSettings(request: RuntimeConfig | undefined, defaults: RuntimeConfig | undefined): RuntimeConfig {
	const merged: RuntimeConfig = { ...(defaults ?? {}) };
	for (const [key, value] of Object.entries(request ?? {})) {
		if (value !== undefined && !(Array.isArray(value) && value.length === 0) && value !== '') (merged as Record<string, unknown>)[key] = value;
	}
	return merged;
}
