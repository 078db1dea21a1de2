/**
 * Hangar's global `telemetry_config` (`<config>/telemetry.json`): what a new workload created
 * without its own inherits. Set with `hangar telemetry set --otel-…`.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { TelemetryConfig } from '../../protocol/runConfig.js';
import type { HangarPaths } from '../store/paths.js';
import { JsonDocument } from '../store/document.js';
import { invalid } from './fields.js';
import { telemetryConfigProblem } from '../runspec/telemetryConfig.js';

const TelemetryDefaults = z.object({ telemetry_config: TelemetryConfig.optional() });
type TelemetryDefaults = z.infer<typeof TelemetryDefaults>;

export class TelemetryDefault {
	private readonly document: JsonDocument<TelemetryDefaults>;

	constructor(paths: HangarPaths) {
		this.document = new JsonDocument(join(paths.config, 'telemetry.json'), { schema: TelemetryDefaults, version: 1 }, () => ({}));
	}

	get path(): string {
		return this.document.path;
	}

	async get(): Promise<TelemetryConfig | undefined> {
		return (await this.document.read()).telemetry_config;
	}

	/** Replaces the default (undefined: none); a 400 names the field at fault. */
	async set(config: TelemetryConfig | undefined): Promise<void> {
		const problem = config && telemetryConfigProblem(config);
		if (problem) throw invalid(`telemetry_config.${problem.field}`, problem.message);
		await this.document.update(() => [config ? { telemetry_config: config } : {}, undefined]);
	}
}
