/**
 * Read-only documents the extension shows: a skill's `SKILL.md` before it is installed, a
 * workload's logs, and the pinned and current definitions of a drifted tool. They live under the `hangar:` scheme, so VS Code never offers to save them.
 */
import * as vscode from 'vscode';

export const SCHEME = 'hangar';

export class ReadOnlyDocuments implements vscode.TextDocumentContentProvider {
	private readonly contents = new Map<string, string>();
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.contents.get(uri.toString()) ?? '';
	}

	/** Opens (or refreshes) the document at `path` with `text`. */
	async show(path: string, text: string, language?: string): Promise<vscode.TextEditor> {
		const uri = vscode.Uri.from({ scheme: SCHEME, path });
		this.contents.set(uri.toString(), text);
		this.changed.fire(uri);
		let document = await vscode.workspace.openTextDocument(uri);
		if (language && document.languageId !== language) document = await vscode.languages.setTextDocumentLanguage(document, language);
		return vscode.window.showTextDocument(document, { preview: true });
	}

	/** Opens a diff editor of two read-only documents, `before` on the left. */
	async diff(before: { path: string; text: string }, after: { path: string; text: string }, title: string): Promise<void> {
		const [left, right] = [before, after].map(({ path, text }) => {
			const uri = vscode.Uri.from({ scheme: SCHEME, path });
			this.contents.set(uri.toString(), text);
			this.changed.fire(uri);
			return uri;
		});
		await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
	}

	dispose(): void {
		this.changed.dispose();
		this.contents.clear();
	}
}
