/**
 * Read-only documents the extension shows: a skill's `SKILL.md` before it is installed, and a
 * workload's logs. They live under the `hangar:` scheme, so VS Code never offers to save them.
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

	dispose(): void {
		this.changed.dispose();
		this.contents.clear();
	}
}
