/**
 * Skill validation: the Agent Skills rules as ToolHive applies them, for a folder on disk or
 * for an inline definition (an editor's unsaved `SKILL.md` and files).
 *
 * An invalid skill is a result (`valid: false` with every error found), not a failure, as is a
 * path that does not exist or is not a folder (ToolHive answers those the same way).
 *
 * Install is gentler than validate: it refuses only what is unsafe or unloadable (no parsable
 * frontmatter, a missing or malformed name or description, too many dependencies) and installs
 * with a warning past the rest (a long description, a field of the wrong type) — `advisory`.
 */
import { lstat, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { SkillValidationResult } from '../../protocol/protocol.skills.js';
import { MAX_PACKAGED_BYTES, MAX_SKILL_FILES, readSkillTree, SKILL_FILE } from './files.js';
import { unportablePaths } from './portableNames.js';
import { MAX_DEPENDENCIES, parseSkillDocument, skillFields, type SkillFields } from './frontmatter.js';

const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}[a-z0-9]$/;
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;
const RECOMMENDED_MAX_LINES = 500;

export interface SkillCheck extends SkillValidationResult {
	readonly errors: string[];
	readonly warnings: string[];
	/** The fields read from the frontmatter, when it parsed. */
	readonly fields?: SkillFields;
	/** The errors that neither make the skill unsafe nor keep clients from loading it. */
	readonly advisory?: string[];
}

/** Why `name` is not a valid skill name, or undefined when it is. */
export function skillNameProblem(name: string): string | undefined {
	if (!NAME_PATTERN.test(name)) {
		return `invalid skill name "${name}": 2-64 lowercase letters, digits and hyphens, not starting or ending with a hyphen`;
	}
	if (name.includes('--')) return `invalid skill name "${name}": may not contain consecutive hyphens`;
	return undefined;
}

/**
 * Checks the text of a `SKILL.md`. `folderName`, when known, must equal the skill's name.
 */
export async function checkSkillDocument(text: string, folderName?: string): Promise<SkillCheck> {
	const errors: string[] = [];
	const warnings: string[] = [];
	const advisory: string[] = [];
	const advise = (error: string) => {
		errors.push(error);
		advisory.push(error);
	};
	const parsed = await parseSkillDocument(text);
	if (!parsed.ok) return { valid: false, errors: [parsed.error], warnings };
	const { frontmatter } = parsed.document;
	const fields = skillFields(frontmatter);

	const name = frontmatter.name;
	if (name === undefined || name === '') errors.push('name is required');
	else if (typeof name !== 'string') errors.push('name must be a string');
	else {
		const problem = skillNameProblem(name);
		if (problem) errors.push(problem);
		else if (folderName !== undefined && name !== folderName) {
			errors.push(`skill name "${name}" must match directory name "${folderName}"`);
		}
	}

	const description = frontmatter.description;
	if (description === undefined || (typeof description === 'string' && description.trim() === '')) {
		errors.push('description is required');
	} else if (typeof description !== 'string') errors.push('description must be a string');
	else if (description.length > MAX_DESCRIPTION) {
		advise(`description is ${description.length} characters; at most ${MAX_DESCRIPTION} allowed`);
	}

	const compatibility = frontmatter.compatibility;
	if (compatibility !== undefined) {
		if (typeof compatibility !== 'string') advise('compatibility must be a string');
		else if (compatibility.length > MAX_COMPATIBILITY) {
			advise(`compatibility is ${compatibility.length} characters; at most ${MAX_COMPATIBILITY} allowed`);
		}
	}

	for (const field of ['version', 'license'] as const) {
		if (frontmatter[field] !== undefined && typeof frontmatter[field] !== 'string') advise(`${field} must be a string`);
	}

	const tools = frontmatter['allowed-tools'];
	if (tools !== undefined) {
		if (Array.isArray(tools)) {
			if (!tools.every((tool) => typeof tool === 'string')) advise('allowed-tools must list strings');
		} else if (typeof tools !== 'string') advise('allowed-tools must be a string or a list');
		else if (tools.includes(',')) {
			warnings.push('allowed-tools is comma-delimited (a ToolHive extension); the Agent Skills format separates tools with spaces');
		}
	}

	const metadata = frontmatter.metadata;
	if (metadata !== undefined) {
		if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) advise('metadata must be a map');
		else {
			const nested = Object.entries(metadata).filter(([, value]) => typeof value !== 'string').map(([key]) => key);
			if (nested.length) warnings.push(`metadata values should be strings: ${nested.join(', ')}`);
		}
	}

	if (fields.requires.length > MAX_DEPENDENCIES) {
		errors.push(`toolhive.requires lists ${fields.requires.length} skills; at most ${MAX_DEPENDENCIES} allowed`);
	}

	const lines = text.split('\n').length;
	if (lines > RECOMMENDED_MAX_LINES) {
		warnings.push(`SKILL.md has ${lines} lines; keep it under ${RECOMMENDED_MAX_LINES} and move detail into other files`);
	}
	return { valid: errors.length === 0, errors, warnings, fields, advisory };
}

/** The errors of a check that refuse an install: all but the advisory ones. */
export function blockingErrors(check: SkillCheck): string[] {
	return check.errors.filter((error) => !check.advisory?.includes(error));
}

/** Validates a skill folder on this machine's file system. */
export async function validateSkillFolder(path: string): Promise<SkillCheck> {
	const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
		if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
		throw error;
	});
	if (!stats) return { valid: false, errors: [`path ${path} does not exist`], warnings: [] };
	if (stats.isSymbolicLink()) {
		return { valid: false, errors: [`skill directory ${path} is a symlink; symlinks are not allowed`], warnings: [] };
	}
	if (!stats.isDirectory()) return { valid: false, errors: [`path ${path} is not a directory`], warnings: [] };

	const tree = await readSkillTree(path);
	const skill = tree.files.find((file) => file.path === SKILL_FILE);
	const check: SkillCheck = skill
		? await checkSkillDocument(await readFile(skill.absolute, 'utf8'), basename(path))
		: { valid: false, errors: ['SKILL.md not found in skill directory'], warnings: [] };
	const errors = [...check.errors];
	const warnings = [...check.warnings];
	for (const entry of tree.unsupported) errors.push(`${entry}: symlinks and special files are not allowed`);
	errors.push(...unportablePaths(tree.files.map((file) => file.path)));
	if (tree.truncated) errors.push(`a skill may hold at most ${MAX_SKILL_FILES} files`);
	const total = tree.files.reduce((sum, file) => sum + file.size, 0);
	if (total > MAX_PACKAGED_BYTES) errors.push(`files total ${total} bytes; at most ${MAX_PACKAGED_BYTES} allowed`);
	if (tree.hidden.length) warnings.push(`hidden files are not part of the skill: ${tree.hidden.slice(0, 10).join(', ')}`);
	return { ...check, valid: errors.length === 0, errors, warnings };
}

/** Validates an inline skill: the text of `SKILL.md` and its other files. */
export async function validateInlineSkill(skillMd: string, files: readonly { path: string; content: string }[] = []): Promise<SkillCheck> {
	const check = await checkSkillDocument(skillMd);
	const errors = [...check.errors];
	const seen = new Set<string>();
	for (const file of files) {
		const path = file.path.replace(/^\.\//, '');
		if (seen.has(path)) errors.push(`${path}: listed twice`);
		seen.add(path);
	}
	if (files.length + 1 > MAX_SKILL_FILES) errors.push(`a skill may hold at most ${MAX_SKILL_FILES} files`);
	const total = files.reduce((sum, file) => sum + Buffer.byteLength(file.content), Buffer.byteLength(skillMd));
	if (total > MAX_PACKAGED_BYTES) errors.push(`files total ${total} bytes; at most ${MAX_PACKAGED_BYTES} allowed`);
	return { ...check, valid: errors.length === 0, errors };
}
