/**
 * The order of the names lists show (groups, clients, skills): by UTF-16 code unit, as Go's
 * sort orders ToolHive's. Not `localeCompare`, whose first call loads ICU's collation data:
 * 8 ms of a command's start, for names that are ASCII.
 */
export function compareNames(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}
