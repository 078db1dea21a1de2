/**
 * Turns a skill validation result into problems placed on the lines of `SKILL.md` they are
 * about. The daemon's messages carry no positions: a message that names a frontmatter field
 * goes on that field's line, anything else on the frontmatter's first line.
 */
import type { SkillValidationResult } from '../../protocol/protocol.skills.js';

export interface Problem {
	readonly line: number;
	readonly start: number;
	readonly end: number;
	readonly message: string;
	readonly severity: 'error' | 'warning';
}

/** Frontmatter fields, most specific first ("allowed-tools" before "name"). */
const FIELDS = ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'version', 'name'];

export function skillProblems(text: string, result: SkillValidationResult, folderName?: string): Problem[] {
	const lines = text.split(/\r?\n/);
	const fieldLines = frontmatterFields(lines);
	const place = (message: string, severity: Problem['severity']): Problem => {
		const field = FIELDS.find((name) => fieldLines.has(name) && new RegExp(`(^|[^a-z-])${name}([^a-z-]|$)`, 'i').test(message));
		const line = field === undefined ? 0 : fieldLines.get(field)!;
		return { line, start: 0, end: lines[line]?.length ?? 0, message, severity };
	};
	const problems = [
		...(result.errors ?? []).map((message) => place(message, 'error')),
		...(result.warnings ?? []).map((message) => place(message, 'warning')),
	];
	// The daemon validates the text alone; the folder it sits in is known only here.
	const nameLine = fieldLines.get('name');
	const name = nameLine === undefined ? undefined : fieldValue(lines[nameLine]!);
	if (folderName && name && name !== folderName) {
		problems.push({
			line: nameLine!,
			start: 0,
			end: lines[nameLine!]!.length,
			message: `name "${name}" must match the skill's folder name "${folderName}"`,
			severity: 'error',
		});
	}
	return problems;
}

/** Line numbers of the top-level keys of the `---` frontmatter block. */
function frontmatterFields(lines: readonly string[]): Map<string, number> {
	const fields = new Map<string, number>();
	if (lines[0]?.trim() !== '---') return fields;
	for (let index = 1; index < lines.length && lines[index]!.trim() !== '---'; index++) {
		const key = /^([A-Za-z][\w-]*)\s*:/.exec(lines[index]!)?.[1];
		if (key && !fields.has(key)) fields.set(key, index);
	}
	return fields;
}

function fieldValue(line: string): string {
	return line
		.slice(line.indexOf(':') + 1)
		.trim()
		.replace(/^(['"])(.*)\1$/, '$2');
}
