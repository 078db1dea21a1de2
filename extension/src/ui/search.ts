/**
 * A quick pick that searches as the user types: registry results come from the daemon (the
 * registry filters them), and the typed text itself can be an item (a reference to use as is).
 */
import * as vscode from 'vscode';
import { describeFailure, isCancellation } from './errors.js';

export interface Choice<V> extends vscode.QuickPickItem {
	/** Items without a value (notes, failures) cannot be accepted. */
	readonly value?: V;
}

export interface SearchPickOptions<V> {
	readonly title: string;
	readonly placeholder: string;
	/** Asks the daemon; an error shows as a note in the list. */
	readonly search: (query: string, signal: AbortSignal) => Promise<Array<Choice<V>>>;
	/** What the failure note says could not be done: "search the registry". */
	readonly searchAction: string;
	/** Items made from the typed text, listed first. */
	readonly typed?: (value: string) => Array<Choice<V>>;
	readonly debounceMs?: number;
}

export function searchPick<V>(options: SearchPickOptions<V>): Promise<V | undefined> {
	const pick = vscode.window.createQuickPick<Choice<V>>();
	pick.title = options.title;
	pick.placeholder = options.placeholder;
	pick.matchOnDescription = true;
	pick.matchOnDetail = true;
	let results: Array<Choice<V>> = [];
	let note: Choice<V> | undefined;
	let timer: NodeJS.Timeout | undefined;
	let controller: AbortController | undefined;

	// Everything is listed: the registry and the typed-text items are already filtered.
	const render = () => {
		pick.items = [...(options.typed?.(pick.value) ?? []), ...(note ? [note] : []), ...results].map((item) => ({ ...item, alwaysShow: true }));
	};
	const search = (query: string) => {
		clearTimeout(timer);
		timer = setTimeout(async () => {
			controller?.abort();
			const current = (controller = new AbortController());
			pick.busy = true;
			try {
				results = await options.search(query, current.signal);
				note = undefined;
			} catch (error) {
				if (current.signal.aborted || isCancellation(error)) return;
				results = [];
				note = { label: `$(warning) ${describeFailure(error, options.searchAction).message}` };
			} finally {
				if (controller === current) {
					pick.busy = false;
					render();
				}
			}
		}, options.debounceMs ?? 250);
	};

	return new Promise<V | undefined>((resolve) => {
		pick.onDidChangeValue((value) => {
			render();
			search(value);
		});
		pick.onDidAccept(() => {
			const value = pick.selectedItems[0]?.value;
			if (value === undefined) return;
			resolve(value);
			pick.hide();
		});
		pick.onDidHide(() => {
			clearTimeout(timer);
			controller?.abort();
			resolve(undefined);
			pick.dispose();
		});
		render();
		pick.show();
		search('');
	});
}
