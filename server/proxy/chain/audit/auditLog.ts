/**
 * The audit log of a workload: one JSON event per line (NDJSON), appended to a file only its
 * owner can read, written in order. Event types can be kept (`eventTypes`) or left out
 * (`excludeEventTypes`); the configuration is checked when the workload is created.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditConfig } from '../../../../protocol/runConfig.js';
import type { Logger } from '../../../log.js';

export const DEFAULT_MAX_DATA_SIZE = 1024;

export class AuditLog {
	private readonly stream: WriteStream;
	private readonly kept: ReadonlySet<string> | undefined;
	private readonly excluded: ReadonlySet<string>;
	private failed = false;

	constructor(
		readonly file: string,
		config: AuditConfig,
		log: Logger,
	) {
		this.kept = config.eventTypes?.length ? new Set(config.eventTypes) : undefined;
		this.excluded = new Set(config.excludeEventTypes ?? []);
		mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
		this.stream = createWriteStream(file, { flags: 'a', mode: 0o600 });
		this.stream.on('error', (error) => {
			if (!this.failed) log.error(`cannot write the audit log ${file}: ${error.message}`);
			this.failed = true;
		});
	}

	/** Whether events of `type` are written (so callers build only those). */
	wants(type: string): boolean {
		return (!this.kept || this.kept.has(type)) && !this.excluded.has(type);
	}

	write(event: object): void {
		this.stream.write(`${JSON.stringify(event)}\n`);
	}

	close(): Promise<void> {
		return new Promise((resolve) => this.stream.end(resolve));
	}
}
