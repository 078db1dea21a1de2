/**
 * Opens the editor a configuration file's format needs (what each offers is `ConfigEditor`, in
 * `editing.ts`); each format's module is loaded on first use.
 */
import type { ConfigEditor } from './editing.js';
import type { ConfigShape } from './table.js';

export async function openEditor(text: string, shape: ConfigShape): Promise<ConfigEditor> {
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
