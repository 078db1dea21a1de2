/**
 * Long daemon work (installs, syncs, container starts) as a cancellable progress notification,
 * fed by the daemon's `$/progress` reports for the request's work-done token.
 */
import * as vscode from 'vscode';
import type { DaemonRequestOptions, WorkDoneProgressValue } from '../daemon.js';

export interface ProgressStep {
	readonly message?: string;
	readonly increment?: number;
}

/** LSP reports absolute percentages; VS Code's progress takes increments. */
export class ProgressTracker {
	private reported = 0;

	step(value: WorkDoneProgressValue): ProgressStep {
		const message = value.kind === 'begin' ? (value.message ?? value.title) : value.message;
		const percentage = value.kind === 'end' ? 100 : value.percentage;
		let increment: number | undefined;
		if (percentage !== undefined) {
			const target = Math.min(100, Math.max(this.reported, percentage));
			increment = target - this.reported;
			this.reported = target;
		}
		return {
			...(message ? { message } : {}),
			...(increment ? { increment } : {}),
		};
	}
}

/** Runs `task` under a notification titled `title`; its Cancel button aborts the request. */
export function withDaemonProgress<T>(title: string, task: (options: DaemonRequestOptions) => Promise<T>): Thenable<T> {
	return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
		const controller = new AbortController();
		const cancellation = token.onCancellationRequested(() => controller.abort());
		const tracker = new ProgressTracker();
		try {
			return await task({ signal: controller.signal, onProgress: (value) => progress.report(tracker.step(value)) });
		} finally {
			cancellation.dispose();
		}
	});
}
