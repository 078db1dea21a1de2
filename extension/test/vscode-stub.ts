/**
 * A stand-in for the `vscode` module in the extension's unit tests (vitest aliases `vscode`
 * here). It implements the part of the API the extension uses, and `stub` lets a test set the
 * workspace, script the user's answers to quick picks, input boxes and dialogs, and read
 * back what the extension showed. The daemon behind the extension stays real.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

export class Disposable {
	constructor(private readonly onDispose: () => void = () => undefined) {}
	dispose(): void {
		this.onDispose();
	}
}

export type Event<T> = (listener: (value: T) => unknown) => Disposable;

export class EventEmitter<T> {
	private readonly listeners = new Set<(value: T) => unknown>();
	readonly event: Event<T> = (listener) => {
		this.listeners.add(listener);
		return new Disposable(() => this.listeners.delete(listener));
	};
	fire(value: T): void {
		for (const listener of [...this.listeners]) listener(value);
	}
	dispose(): void {
		this.listeners.clear();
	}
}

export class Uri {
	private constructor(
		readonly scheme: string,
		readonly path: string,
		readonly query = '',
	) {}
	static file(path: string): Uri {
		return new Uri('file', path);
	}
	static parse(value: string): Uri {
		const url = new URL(value);
		return new Uri(url.protocol.slice(0, -1), url.pathname, url.search.slice(1));
	}
	static from(parts: { scheme: string; path?: string; query?: string }): Uri {
		return new Uri(parts.scheme, parts.path ?? '', parts.query ?? '');
	}
	static joinPath(base: Uri, ...segments: string[]): Uri {
		return new Uri(base.scheme, join(base.path, ...segments));
	}
	get fsPath(): string {
		return this.path;
	}
	toString(): string {
		return `${this.scheme}://${this.path}${this.query ? `?${this.query}` : ''}`;
	}
}

export enum TreeItemCollapsibleState {
	None = 0,
	Collapsed = 1,
	Expanded = 2,
}

export class ThemeIcon {
	constructor(
		readonly id: string,
		readonly color?: ThemeColor,
	) {}
}

export class ThemeColor {
	constructor(readonly id: string) {}
}

export class MarkdownString {
	constructor(public value = '') {}

	appendMarkdown(value: string): this {
		this.value += value;
		return this;
	}

	/** As VS Code's: Markdown's characters escaped. */
	appendText(value: string): this {
		this.value += value.replace(/[\\`*_{}[\]()#+\-.!<>|~]/g, '\\$&');
		return this;
	}
}

export class TreeItem {
	description?: string;
	tooltip?: string | MarkdownString;
	iconPath?: ThemeIcon;
	contextValue?: string;
	id?: string;
	command?: { command: string; title: string; arguments?: unknown[] };
	constructor(
		public label: string,
		public collapsibleState = TreeItemCollapsibleState.None,
	) {}
}

export class Position {
	constructor(
		readonly line: number,
		readonly character: number,
	) {}
}

export class Range {
	readonly start: Position;
	readonly end: Position;
	constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
		this.start = new Position(startLine, startCharacter);
		this.end = new Position(endLine, endCharacter);
	}
}

export enum DiagnosticSeverity {
	Error = 0,
	Warning = 1,
	Information = 2,
	Hint = 3,
}

export class Diagnostic {
	source?: string;
	constructor(
		readonly range: Range,
		readonly message: string,
		readonly severity = DiagnosticSeverity.Error,
	) {}
}

export enum ProgressLocation {
	SourceControl = 1,
	Window = 10,
	Notification = 15,
}

export class McpHttpServerDefinition {
	constructor(
		readonly label: string,
		readonly uri: Uri,
		readonly headers: Record<string, string> = {},
		readonly version?: string,
	) {}
}

class CancellationTokenSource {
	private readonly emitter = new EventEmitter<void>();
	readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
	cancel(): void {
		this.token.isCancellationRequested = true;
		this.emitter.fire();
	}
}

// ---------------------------------------------------------------------------------------------
// What a test scripts and reads back
// ---------------------------------------------------------------------------------------------

export interface WorkspaceFolder {
	readonly uri: Uri;
	readonly name: string;
	readonly index: number;
}

export interface TextDocument {
	readonly uri: Uri;
	readonly languageId: string;
	getText(): string;
}

export interface TreeDataProvider {
	getChildren(node?: unknown): Promise<TreeItem[]> | TreeItem[];
	onDidChangeTreeData?: Event<unknown>;
}

/** A quick pick as the scripted user sees it. */
export interface PickSession {
	readonly title?: string;
	readonly placeholder?: string;
	readonly canPickMany: boolean;
	/** The items listed now; `picked` marks those selected (multi-select picks). */
	items(): Array<{ label: string; description?: string; detail?: string; picked?: boolean }>;
	/** Types into the filter box and waits until the list settles (searchable picks only). */
	type(value: string): Promise<void>;
}

type PickAnswer = (session: PickSession) => unknown;
type InputAnswer = (options: InputBoxOptions) => string | undefined;
type MessageAnswer = (message: ShownMessage) => string | undefined;

interface InputBoxOptions {
	title?: string;
	prompt?: string;
	value?: string;
	password?: boolean;
	validateInput?: (value: string) => string | undefined | Promise<string | undefined>;
}

export interface ShownMessage {
	readonly level: 'info' | 'warning' | 'error';
	readonly message: string;
	readonly items: string[];
	readonly modal: boolean;
}

export interface ProgressRecord {
	readonly title?: string;
	readonly reports: Array<{ message?: string; increment?: number }>;
	cancel(): void;
	done: boolean;
}

type Answer = { kind: 'pick'; answer: PickAnswer } | { kind: 'input'; answer: InputAnswer } | { kind: 'message'; answer: MessageAnswer };

const answers: Answer[] = [];
const commandHandlers = new Map<string, (...args: unknown[]) => unknown>();
const contentProviders = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();
const diagnosticCollections: DiagnosticCollection[] = [];
const workspaceFoldersChanged = new EventEmitter<unknown>();
const configurationChanged = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
const documentChanged = new EventEmitter<{ document: TextDocument }>();
const documentClosed = new EventEmitter<TextDocument>();

export const stub = {
	folders: [] as WorkspaceFolder[],
	activeDocument: undefined as TextDocument | undefined,
	configuration: {} as Record<string, unknown>,
	messages: [] as ShownMessage[],
	progress: [] as ProgressRecord[],
	shownDocuments: [] as TextDocument[],
	output: [] as string[],
	executed: [] as string[],
	/** URIs the extension opened outside the editor (`vscode.env.openExternal`). */
	opened: [] as string[],
	/** Problems by document URI, across the extension's diagnostic collections. */
	diagnostics(uri: Uri): Diagnostic[] {
		return diagnosticCollections.flatMap((collection) => collection.get(uri) ?? []);
	},
	/** `vscode.env.appName`: the editor running the extension. */
	appName: 'Visual Studio Code',
	/** The editor has `vscode.lm.registerMcpServerDefinitionProvider` (true by default). */
	mcpApi: true,
	mcpProviders: new Map<string, { provideMcpServerDefinitions(): unknown; onDidChangeMcpServerDefinitions?: Event<void> }>(),
	/** Tree data providers by view id. */
	trees: new Map<string, TreeDataProvider>(),
	/** Unanswered prompts (a test that expected one fails on them). */
	unexpected: [] as string[],

	answerPick(answer: PickAnswer): void {
		answers.push({ kind: 'pick', answer });
	},
	answerInput(answer: string | undefined | InputAnswer): void {
		answers.push({ kind: 'input', answer: typeof answer === 'function' ? answer : () => answer });
	},
	answerMessage(answer: string | undefined | MessageAnswer): void {
		answers.push({ kind: 'message', answer: typeof answer === 'function' ? answer : () => answer });
	},
	/** Answers still queued. */
	pending(): number {
		return answers.length;
	},

	folder(path: string, name = path.split('/').pop()!): WorkspaceFolder {
		return { uri: Uri.file(path), name, index: stub.folders.length };
	},
	document(path: string, text: string, languageId = 'markdown'): TextDocument {
		return { uri: Uri.file(path), languageId, getText: () => text };
	},
	changeDocument(document: TextDocument): void {
		documentChanged.fire({ document });
	},
	changeConfiguration(section: string, value: unknown): void {
		stub.configuration[section] = value;
		configurationChanged.fire({ affectsConfiguration: (prefix) => section === prefix || section.startsWith(`${prefix}.`) });
	},
	changeWorkspaceFolders(folders: WorkspaceFolder[]): void {
		stub.folders = folders;
		workspaceFoldersChanged.fire({});
	},

	reset(): void {
		answers.length = 0;
		commandHandlers.clear();
		contentProviders.clear();
		diagnosticCollections.length = 0;
		stub.folders = [];
		stub.activeDocument = undefined;
		stub.configuration = {};
		stub.messages = [];
		stub.progress = [];
		stub.shownDocuments = [];
		stub.output = [];
		stub.executed = [];
		stub.opened = [];
		stub.appName = 'Visual Studio Code';
		stub.mcpApi = true;
		stub.mcpProviders.clear();
		stub.trees.clear();
		stub.unexpected = [];
	},
};

function nextAnswer(kind: 'pick', what: string): PickAnswer | undefined;
function nextAnswer(kind: 'input', what: string): InputAnswer | undefined;
function nextAnswer(kind: 'message', what: string): MessageAnswer | undefined;
function nextAnswer(kind: Answer['kind'], what: string): Answer['answer'] | undefined {
	if (answers[0]?.kind === kind) return answers.shift()!.answer;
	if (kind !== 'message') stub.unexpected.push(`${kind}: ${what}`);
	return undefined;
}

/** Settles a searchable pick: no change for a while, nothing loading. */
async function settle(isBusy: () => boolean, lastChange: () => number): Promise<void> {
	const deadline = Date.now() + 20_000;
	while (isBusy() || Date.now() - lastChange() < 400) {
		if (Date.now() > deadline) throw new Error('the quick pick never settled');
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

// ---------------------------------------------------------------------------------------------
// Namespaces
// ---------------------------------------------------------------------------------------------

interface QuickPickItem {
	label: string;
	description?: string;
	detail?: string;
	picked?: boolean;
	alwaysShow?: boolean;
}

class QuickPick<T extends QuickPickItem> {
	title?: string;
	placeholder?: string;
	matchOnDescription = false;
	matchOnDetail = false;
	canSelectMany = false;
	busy = false;
	items: readonly T[] = [];
	selectedItems: readonly T[] = [];
	private valueText = '';
	private changedAt = Date.now();
	private readonly changeValue = new EventEmitter<string>();
	private readonly changeSelection = new EventEmitter<readonly T[]>();
	private readonly accept = new EventEmitter<void>();
	private readonly hideEmitter = new EventEmitter<void>();
	readonly onDidChangeValue = this.changeValue.event;
	readonly onDidChangeSelection = this.changeSelection.event;
	readonly onDidAccept = this.accept.event;
	readonly onDidHide = this.hideEmitter.event;
	private hidden = false;

	get value(): string {
		return this.valueText;
	}
	set value(value: string) {
		this.valueText = value;
	}

	/**
	 * Answers with the next scripted answer: an item, or an array of items (the selection of a
	 * multi-select pick). A pick still open after the accept refused it: it takes the next answer
	 * when one is queued, else it stays open.
	 */
	show(): void {
		void (async () => {
			for (let round = 0; !this.hidden && (round === 0 || answers[0]?.kind === 'pick'); round++) {
				const answer = nextAnswer('pick', this.title ?? this.placeholder ?? 'quick pick');
				// A multi-select pick lists its items with their selection; a single one, live (it may search).
				const selection = this.items.map((item) => ({ ...item, picked: this.selectedItems.includes(item) }));
				const session: PickSession = {
					title: this.title,
					placeholder: this.placeholder,
					canPickMany: this.canSelectMany,
					items: () => (this.canSelectMany ? selection : [...this.items]),
					type: async (value) => {
						this.valueText = value;
						this.changedAt = Date.now();
						this.changeValue.fire(value);
						await settle(() => this.busy, () => this.changedAt);
					},
				};
				await settle(() => this.busy, () => this.changedAt);
				const chosen = answer ? await answer(session) : undefined;
				if (this.hidden) return;
				if (chosen === undefined) {
					this.hide();
					return;
				}
				// Answers name items by their listed form; select the extension's own objects.
				const original = (item: unknown) => this.items[selection.indexOf(item as (typeof selection)[number])] ?? (item as T);
				this.selectedItems = Array.isArray(chosen) ? chosen.map(original) : [original(chosen)];
				if (this.canSelectMany) this.changeSelection.fire(this.selectedItems);
				this.accept.fire();
			}
		})();
	}
	hide(): void {
		if (this.hidden) return;
		this.hidden = true;
		this.hideEmitter.fire();
	}
	dispose(): void {
		this.hide();
	}
}

class OutputChannel {
	constructor(readonly name: string) {}
	appendLine(line: string): void {
		stub.output.push(line);
	}
	show(): void {
		stub.executed.push(`output.show:${this.name}`);
	}
	dispose(): void {}
}

class DiagnosticCollection {
	private readonly entries = new Map<string, Diagnostic[]>();
	constructor(readonly name: string) {
		diagnosticCollections.push(this);
	}
	set(uri: Uri, diagnostics: Diagnostic[]): void {
		this.entries.set(uri.toString(), diagnostics);
	}
	get(uri: Uri): Diagnostic[] | undefined {
		return this.entries.get(uri.toString());
	}
	has(uri: Uri): boolean {
		return this.entries.has(uri.toString());
	}
	delete(uri: Uri): void {
		this.entries.delete(uri.toString());
	}
	dispose(): void {
		this.entries.clear();
	}
}

function showMessage(level: ShownMessage['level']) {
	return async (message: string, ...rest: unknown[]): Promise<string | undefined> => {
		const options = typeof rest[0] === 'object' && rest[0] !== null ? (rest.shift() as { modal?: boolean }) : {};
		const shown: ShownMessage = { level, message, items: rest as string[], modal: Boolean(options.modal) };
		stub.messages.push(shown);
		if (shown.items.length === 0) return undefined;
		return nextAnswer('message', message)?.(shown);
	};
}

export const window = {
	get activeTextEditor() {
		return stub.activeDocument ? { document: stub.activeDocument } : undefined;
	},
	createOutputChannel: (name: string) => new OutputChannel(name),
	createTreeView: (id: string, options: { treeDataProvider: TreeDataProvider }) => {
		stub.trees.set(id, options.treeDataProvider);
		return { ...options, description: undefined as string | undefined, dispose() {} };
	},
	registerTreeDataProvider: (id: string, provider: TreeDataProvider) => {
		stub.trees.set(id, provider);
		return new Disposable(() => stub.trees.delete(id));
	},
	createQuickPick: <T extends QuickPickItem>() => new QuickPick<T>(),
	async showQuickPick<T extends QuickPickItem | string>(
		items: readonly T[] | Promise<readonly T[]>,
		options: { title?: string; placeHolder?: string; canPickMany?: boolean } = {},
	): Promise<T | T[] | undefined> {
		const list = await items;
		const answer = nextAnswer('pick', options.title ?? options.placeHolder ?? 'quick pick');
		const asItem = (item: T): QuickPickItem => (typeof item === 'string' ? { label: item } : (item as QuickPickItem));
		const session: PickSession = {
			title: options.title,
			placeholder: options.placeHolder,
			canPickMany: Boolean(options.canPickMany),
			items: () => list.map(asItem),
			type: () => Promise.reject(new Error('showQuickPick has no filter to type into in this stub')),
		};
		const chosen = answer ? await answer(session) : undefined;
		if (chosen === undefined) return undefined;
		// Answers name items by their listed form; hand back the extension's own objects.
		const listed = list.map(asItem);
		const original = (item: unknown) => list[listed.indexOf(item as QuickPickItem)] ?? (item as T);
		return Array.isArray(chosen) ? chosen.map(original) : original(chosen);
	},
	async showInputBox(options: InputBoxOptions = {}): Promise<string | undefined> {
		const answer = nextAnswer('input', options.title ?? options.prompt ?? 'input box');
		const value = answer?.(options);
		if (value !== undefined && options.validateInput) {
			const problem = await options.validateInput(value);
			if (problem) throw new Error(`the input box refused ${JSON.stringify(value)}: ${problem}`);
		}
		return value;
	},
	showInformationMessage: showMessage('info'),
	showWarningMessage: showMessage('warning'),
	showErrorMessage: showMessage('error'),
	setStatusBarMessage: (text: string) => {
		stub.messages.push({ level: 'info', message: text, items: [], modal: false });
		return new Disposable();
	},
	async withProgress<R>(
		options: { title?: string },
		task: (progress: { report(value: { message?: string; increment?: number }): void }, token: CancellationTokenSource['token']) => Promise<R>,
	): Promise<R> {
		const source = new CancellationTokenSource();
		const record: ProgressRecord = { title: options.title, reports: [], cancel: () => source.cancel(), done: false };
		stub.progress.push(record);
		try {
			return await task({ report: (value) => record.reports.push(value) }, source.token);
		} finally {
			record.done = true;
		}
	},
	async showTextDocument(document: TextDocument) {
		stub.shownDocuments.push(document);
		return { document };
	},
	async showOpenDialog() {
		return undefined;
	},
};

export const workspace = {
	get workspaceFolders(): readonly WorkspaceFolder[] | undefined {
		return stub.folders.length ? stub.folders : undefined;
	},
	getWorkspaceFolder(uri: Uri): WorkspaceFolder | undefined {
		return stub.folders.find((folder) => folder.uri.scheme === uri.scheme && (uri.path === folder.uri.path || uri.path.startsWith(`${folder.uri.path}/`)));
	},
	getConfiguration(section: string) {
		return {
			get<T>(key: string, fallback?: T): T | undefined {
				const name = `${section}.${key}`;
				return name in stub.configuration ? (stub.configuration[name] as T) : fallback;
			},
		};
	},
	onDidChangeWorkspaceFolders: workspaceFoldersChanged.event,
	onDidChangeConfiguration: configurationChanged.event,
	onDidChangeTextDocument: documentChanged.event,
	onDidCloseTextDocument: documentClosed.event,
	registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) {
		contentProviders.set(scheme, provider);
		return new Disposable(() => contentProviders.delete(scheme));
	},
	async openTextDocument(uri: Uri): Promise<TextDocument> {
		const provider = contentProviders.get(uri.scheme);
		const text = provider ? provider.provideTextDocumentContent(uri) : readFileSync(fileURLToPath(`file://${uri.path}`), 'utf8');
		return { uri, languageId: 'plaintext', getText: () => text };
	},
};

export const languages = {
	createDiagnosticCollection: (name: string) => new DiagnosticCollection(name),
	async setTextDocumentLanguage(document: TextDocument, languageId: string): Promise<TextDocument> {
		return { ...document, languageId };
	},
};

export const commands = {
	registerCommand(id: string, handler: (...args: unknown[]) => unknown) {
		if (commandHandlers.has(id)) throw new Error(`command ${id} already registered`);
		commandHandlers.set(id, handler);
		return new Disposable(() => commandHandlers.delete(id));
	},
	async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
		stub.executed.push(id);
		return commandHandlers.get(id)?.(...args);
	},
	/** Test helper: ids of the commands registered now. */
	registered: () => [...commandHandlers.keys()],
};

export const env = {
	get appName(): string {
		return stub.appName;
	},
	async openExternal(uri: Uri): Promise<boolean> {
		stub.opened.push(uri.toString());
		return true;
	},
};

export const lm = {
	get registerMcpServerDefinitionProvider() {
		if (!stub.mcpApi) return undefined;
		return (id: string, provider: { provideMcpServerDefinitions(): unknown }) => {
			stub.mcpProviders.set(id, provider);
			return new Disposable(() => stub.mcpProviders.delete(id));
		};
	},
};
