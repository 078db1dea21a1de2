/**
 * What a service receives besides its params: a way to be cancelled and a way to report
 * progress. Both are transport-neutral; the daemon wires them to `$/cancelRequest` and
 * `$/progress`, the REST adapter to a closed connection, the CLI to Ctrl-C and stderr.
 */
export interface Progress {
	begin(title: string, message?: string, percentage?: number): void;
	report(message?: string, percentage?: number): void;
	end(message?: string): void;
}

/** What a step of an operation reports through; the operation itself begins and ends its progress. */
export type ProgressReporter = Pick<Progress, 'report'>;

export interface OperationContext {
	readonly signal: AbortSignal;
	readonly progress: Progress;
}

export const silentProgress: Progress = {
	begin() {},
	report() {},
	end() {},
};

export function contextFor(signal: AbortSignal, progress: Progress = silentProgress): OperationContext {
	return { signal, progress };
}
