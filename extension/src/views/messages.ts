/** A tree item that says why a view has nothing to show (empty, failed, not implemented yet). */
import * as vscode from 'vscode';
import { describeFailure } from '../ui/errors.js';

export class MessageItem extends vscode.TreeItem {
	readonly kind = 'message';

	constructor(text: string, icon: string, tooltip?: string) {
		super(text, vscode.TreeItemCollapsibleState.None);
		this.iconPath = new vscode.ThemeIcon(icon);
		this.contextValue = 'message';
		if (tooltip) this.tooltip = tooltip;
	}

	static empty(text: string): MessageItem {
		return new MessageItem(text, 'info');
	}

	/** `action` as in `describeFailure`: "list skills". */
	static failure(error: unknown, action: string): MessageItem {
		const failure = describeFailure(error, action);
		return new MessageItem(failure.message, failure.kind === 'notImplemented' ? 'warning' : 'error', failure.message);
	}
}
