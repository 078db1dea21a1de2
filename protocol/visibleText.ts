/**
 * Text that came from a server (a status reason, a log line, an error message, a tool's text)
 * as a person may be shown it: every control character that could drive a terminal or reorder
 * what is read (C0 and C1 controls, DEL, the bidirectional overrides and isolates) is written
 * out as `\uXXXX`, which is also a valid escape inside a JSON string. Tabs and line breaks stay
 * unless `oneLine` (a table cell); a carriage return stays only before a line feed.
 */
const CONTROLS = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;
const CONTROLS_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (character: string) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function visibleText(text: string, oneLine = false): string {
	return text.replace(oneLine ? CONTROLS_ONE_LINE : CONTROLS, escaped);
}
