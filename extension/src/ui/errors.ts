/**
 * How a failed action is told to the user: one notification that says what failed and why,
 * with the way out. Cancellation is silent; an operation the daemon does not implement yet
 * (501) is a warning, not a crash; a lost daemon offers its log and a restart.
 */
import * as vscode from 'vscode';
import { HangarError } from '../../../protocol/errors.js';
import { visibleText } from '../../../protocol/visibleText.js';

export type FailureKind = 'cancelled' | 'notImplemented' | 'daemon' | 'failed';

export interface Failure {
	readonly kind: FailureKind;
	readonly message: string;
}

/** `action` names what was tried, as a verb phrase: "install skill 'docs'". */
export function describeFailure(error: unknown, action: string): Failure {
	if (isCancellation(error)) return { kind: 'cancelled', message: `Cancelled: ${action}.` };
	// The reason may be a server's text: its control characters are shown, not passed on.
	const reason = visibleText(error instanceof Error ? error.message : String(error), true);
	if (error instanceof HangarError && error.status === 501) {
		return { kind: 'notImplemented', message: `Cannot ${action} yet: this Hangar daemon does not implement it (${reason}).` };
	}
	if (error instanceof HangarError && error.status === 503 && String(error.code).startsWith('daemon_')) {
		return { kind: 'daemon', message: `Could not ${action}: ${reason}.` };
	}
	return { kind: 'failed', message: `Could not ${action}: ${reason}` };
}

export function isCancellation(error: unknown): boolean {
	return (error instanceof HangarError && error.status === 499) || (error as Error | undefined)?.name === 'AbortError';
}

const SHOW_LOG = 'Show Log';
const RESTART = 'Restart Daemon';

export async function showFailure(error: unknown, action: string): Promise<void> {
	const failure = describeFailure(error, action);
	switch (failure.kind) {
		case 'cancelled':
			return;
		case 'notImplemented':
			await vscode.window.showWarningMessage(failure.message);
			return;
		case 'daemon': {
			const choice = await vscode.window.showErrorMessage(failure.message, SHOW_LOG, RESTART);
			if (choice === SHOW_LOG) await vscode.commands.executeCommand('hangar.showLog');
			if (choice === RESTART) await vscode.commands.executeCommand('hangar.restartDaemon');
			return;
		}
		default: {
			const choice = await vscode.window.showErrorMessage(failure.message, SHOW_LOG);
			if (choice === SHOW_LOG) await vscode.commands.executeCommand('hangar.showLog');
		}
	}
}
