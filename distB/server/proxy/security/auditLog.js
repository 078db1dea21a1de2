/**
 * The audit log of a workload: one JSON event per line (NDJSON), appended to a file only its
 * owner can read, written in order. Event types can be kept (`eventTypes`) or left out
 * (`excludeEventTypes`); the configuration is checked when the workload is created.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
export const DEFAULT_MAX_DATA_SIZE = 1024;
export class AuditLog {
    file;
    stream;
    kept;
    excluded;
    failed = false;
    constructor(file, config, log) {
        this.file = file;
        this.kept = config.eventTypes?.length ? new Set(config.eventTypes) : undefined;
        this.excluded = new Set(config.excludeEventTypes ?? []);
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        this.stream = createWriteStream(file, { flags: 'a', mode: 0o600 });
        this.stream.on('error', (error) => {
            if (!this.failed)
                log.error(`cannot write the audit log ${file}: ${error.message}`);
            this.failed = true;
        });
    }
    /** Whether events of `type` are written (so callers build only those). */
    wants(type) {
        return (!this.kept || this.kept.has(type)) && !this.excluded.has(type);
    }
    write(event) {
        this.stream.write(`${JSON.stringify(event)}\n`);
    }
    close() {
        return new Promise((resolve) => this.stream.end(resolve));
    }
}
//# sourceMappingURL=auditLog.js.map