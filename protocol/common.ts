/**
 * Schemas shared by several areas: names (groups, workloads, skills, client ids), scopes, paths,
 * query-string scalars and empty values.
 */
import { z } from 'zod';
import { CLIENT_APPS, unsupportedClientMessage } from './clientApps.js';

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
	.regex(/^(?:\S(?:[\s\S]*\S)?)?$/, 'group name may not start or end with a space')
	.regex(/^(?![\s\S]*\s{2})/, 'group name may not contain consecutive spaces');

/**
 * Workload names (ToolHive's rule): a plain file-system-safe token, so it can name a
 * container, a state file and a log file.
 */
export const WorkloadName = requiredString('workload name')
	.max(100, 'workload name is at most 100 characters')
	.regex(/^[a-zA-Z0-9._-]+$/, 'workload name can only contain alphanumeric characters, dots, hyphens, and underscores')
	.regex(/^(?!\.\.?$)/, 'workload name may not be "." or ".."');

/** A map of string to string, as env vars and labels are. */
export const StringMap = z.record(z.string(), z.string());

export { CLIENT_APPS, HANGAR_CLIENT_APPS, TOOLHIVE_CLIENT_APPS, unsupportedClientMessage } from './clientApps.js';

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
	.regex(/^(?![\s\S]*--)/, 'invalid skill name: may not contain consecutive hyphens');

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
	.regex(/^(\/|[A-Za-z]:[\\/]|\\\\)/, 'path must be absolute')
	.regex(/^[^\0]*$/, 'path may not contain NUL bytes')
	.regex(/^(?![\s\S]*?(?:^|[\\/])\.\.(?:[\\/]|$))/, 'path may not contain ".." segments');
