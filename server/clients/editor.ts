/**
 * Opens the editor a configuration file's format needs (what each offers is `ConfigEditor`, in
 * `editing.ts`); each format's module is loaded on first use. A UTF-8 byte order mark (which
 * Notepad and PowerShell 5 write) is set aside before the format's parser sees the text, and
 * put back in front of what the editor writes, so the file keeps it as the user had it.
 */
import type { ConfigEditor } from './editing.js';
import type { ConfigShape } from './table.js';

const BYTE_ORDER_MARK = '\uFEFF';

export async function openEditor(text: string, shape: ConfigShape): Promise<ConfigEditor> {
	if (!text.startsWith(BYTE_ORDER_MARK)) return openFormat(text, shape);
	const editor = await openFormat(text.slice(BYTE_ORDER_MARK.length), shape);
	return {
		entries: () => editor.entries(),
		add: (name, fields) => editor.add(name, fields),
		set: (name, key, value) => editor.set(name, key, value),
		unset: (name, key) => editor.unset(name, key),
		remove: (name) => editor.remove(name),
		text: () => BYTE_ORDER_MARK + editor.text(),
	};
}

async function openFormat(text: string, shape: ConfigShape): Promise<ConfigEditor> {
	switch (shape.format) {
		case 'json':
		case 'jsonc':
			return (await import('./jsonEditor.js')).openJsonEditor(text, shape);
		case 'yaml':
			return (await import('./yamlEditor.js')).openYamlEditor(text, shape);
		case 'toml':
			return (await import('./tomlEditor.js')).openTomlEditor(text, shape);
	}
}
