/**
 * Hangar's global `telemetry_config` (`<config>/telemetry.json`): what a new workload created
 * without its own inherits. Set with `hangar telemetry set --otel-…`.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { TelemetryConfig } from '../../protocol/runConfig.js';
import { JsonDocument } from '../store/document.js';
import { invalid } from './fields.js';
import { telemetryConfigProblem } from '../runspec/telemetryConfig.js';
const TelemetryDefaults = z.object({ telemetry_config: TelemetryConfig.optional() });
export class TelemetryDefault {
    document;
    constructor(paths) {
        this.document = new JsonDocument(join(paths.config, 'telemetry.json'), { schema: TelemetryDefaults, version: 1 }, () => ({}));
    }
    get path() {
        return this.document.path;
    }
    async get() {
        return (await this.document.read()).telemetry_config;
    }
    /** Replaces the default (undefined: none); a 400 names the field at fault. */
    async set(config) {
        const problem = config && telemetryConfigProblem(config);
        if (problem)
            throw invalid(`telemetry_config.${problem.field}`, problem.message);
        await this.document.update(() => [config ? { telemetry_config: config } : {}, undefined]);
    }
}
//# sourceMappingURL=telemetryDefault.js.map