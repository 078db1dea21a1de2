/**
 * Schemas shared by several areas: names (groups, workloads, skills, client ids), scopes, paths,
 * query-string scalars and empty values.
 */
import { z } from 'zod';

/** No params. Unknown keys (such as a `workDoneToken`) are ignored, as ToolHive ignores them. */
export const NoParams = z.object({});

/** A success with no body (REST 202/204; JSON-RPC `null`). */
export const NoResult = z.null();

/**
 * An integer from JSON or from a query string. Query values arrive as strings; JSON-RPC
 * callers send numbers. Either way the service sees a number.
 */
export const QueryInteger = z.union([
	z.number().int(),
	z
		.string()
		.regex(/^-?\d+$/, 'expected an integer')
		.transform((value) => Number.parseInt(value, 10)),
]);

/** A boolean from JSON or from a query string (`true`, `false`, `1`, `0`). */
export const QueryBoolean = z.union([
	z.boolean(),
	z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1'),
]);

/**
 * A required, non-empty string whose error names the field when it is missing or empty
 * (`"<field> is required"`), so a 400 says what to send.
 */
export function requiredString(field: string) {
	return z
		.string({ error: (issue) => (issue.input === undefined ? `${field} is required` : undefined) })
		.min(1, `${field} is required`);
}

/**
 * Group names (ToolHive's rule): lowercase letters, digits, `_`, `-` and single inner spaces.
 */
export const GroupName = requiredString('group name')
	.max(100, 'group name is at most 100 characters')
	.regex(/^[a-z0-9_\-\s]+$/, 'group name may only contain lowercase letters, digits, "_", "-" and spaces')
	.refine((name) => name.trim() === name, 'group name may not start or end with a space')
	.refine((name) => !/\s{2}/.test(name), 'group name may not contain consecutive spaces');

/**
 * Workload names (ToolHive's rule): a plain file-system-safe token, so it can name a
 * container, a state file and a log file.
 */
export const WorkloadName = requiredString('workload name')
	.max(100, 'workload name is at most 100 characters')
	.regex(/^[a-zA-Z0-9._-]+$/, 'workload name can only contain alphanumeric characters, dots, hyphens, and underscores')
	.refine((name) => name !== '.' && name !== '..', 'workload name may not be "." or ".."');

/** A map of string to string, as env vars and labels are. */
export const StringMap = z.record(z.string(), z.string());

/**
 * MCP client application ids, exactly as ToolHive's `ClientApp` enum spells them, then Hangar's
 * own (`HANGAR_CLIENT_APPS`). Clients and skills both take them; an unknown id is a 400
 * (`unsupported client type`).
 */
export const TOOLHIVE_CLIENT_APPS = [
	'roo-code',
	'cline',
	'cursor',
	'vscode-insider',
	'vscode',
	'claude-code',
	'windsurf',
	'windsurf-jetbrains',
	'amp-cli',
	'lm-studio',
	'goose',
	'trae',
	'continue',
	'opencode',
	'kiro',
	'antigravity',
	'zed',
	'gemini-cli',
	'vscode-server',
	'mistral-vibe',
	'codex',
	'kimi-cli',
	'factory',
	'copilot-cli',
	'qoder',
] as const;

/** Hangar extension: clients ToolHive's enum does not list (Amazon Q Developer CLI). */
export const HANGAR_CLIENT_APPS = ['amazon-q'] as const;

export const CLIENT_APPS = [...TOOLHIVE_CLIENT_APPS, ...HANGAR_CLIENT_APPS] as const;

/** The refusal of an unknown client id: what was sent, the closest id, and every id. */
export function unsupportedClientMessage(name: string): string {
	const close = CLIENT_APPS.find((id) => id === name.toLowerCase().replace(/[\s_]+/g, '-'));
	const hint = close ? `; did you mean '${close}'?` : '';
	return `unsupported client type: ${name}${hint} (supported: ${CLIENT_APPS.join(', ')})`;
}

export const ClientApp = z.enum(CLIENT_APPS, {
	error: (issue) => (issue.input === undefined ? 'client name is required' : unsupportedClientMessage(String(issue.input))),
});
export type ClientApp = z.infer<typeof ClientApp>;

/**
 * Skill names (ToolHive's rule, from the Agent Skills spec): 2–64 characters of lowercase
 * letters, digits and hyphens, starting and ending with a letter or digit, no `--`.
 */
export const SkillName = requiredString('skill name')
	.regex(
		/^[a-z0-9][a-z0-9-]{0,62}[a-z0-9]$/,
		'invalid skill name: 2-64 lowercase letters, digits and hyphens, not starting or ending with a hyphen',
	)
	.refine((name) => !name.includes('--'), 'invalid skill name: may not contain consecutive hyphens');

/** Where a skill is installed: the user's home (`user`, the default) or a project (`project`). */
export const Scope = z.enum(['user', 'project'], {
	error: (issue) => `invalid scope: ${String(issue.input)} (valid scopes: user, project)`,
});
export type Scope = z.infer<typeof Scope>;

/**
 * An absolute path on the service's file system (POSIX `/…` or Windows `C:\…`), without NUL
 * bytes or `..` segments. Existence and symlinks are checked by the service.
 */
export const AbsolutePath = requiredString('path')
	.refine((path) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path), 'path must be absolute')
	.refine((path) => !path.includes('\0'), 'path may not contain NUL bytes')
	.refine((path) => !path.split(/[\\/]/).includes('..'), 'path may not contain ".." segments');
