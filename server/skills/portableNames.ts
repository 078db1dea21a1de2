/**
 * Names a skill may hold so that it installs the same on every OS: a skill installed on Linux
 * may be synced to Windows, or to a case-insensitive macOS disk. Windows cannot create a
 * reserved device name (`CON`, `NUL`, `COM1`…, with any extension: `con.txt` is the console
 * too), a name ending in a dot or a space (it drops them, so `a.` becomes `a`), or one holding
 * `< > : " | ? *` or a control character (`a:b` is the stream `b` of the file `a`). Two names
 * differing only in case are one file there (and on macOS by default).
 */

const RESERVED = /^(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[0-9¹²³]|LPT[0-9¹²³])$/i;
const FORBIDDEN = /[<>:"|?*\u0000-\u001F]/;

/** Why a `/`-separated relative path cannot be written on every OS, or undefined when it can. */
export function unportableNameProblem(path: string): string | undefined {
	for (const part of path.split('/')) {
		// Windows reads the name before the first dot, spaces trimmed, as the device.
		if (RESERVED.test(part.split('.')[0]!.trimEnd())) return `${path}: ${part} is a reserved name on Windows; rename it`;
		if (/[. ]$/.test(part) && part !== '.' && part !== '..') return `${path}: ${JSON.stringify(part)} ends with a dot or a space, which Windows drops; rename it`;
		if (FORBIDDEN.test(part)) return `${path}: ${JSON.stringify(part)} has a character a name cannot hold on Windows (< > : " | ? * or a control character); rename it`;
	}
	return undefined;
}

/**
 * Remembers the paths of one skill and tells when one would be the same file or folder as an
 * earlier one on a case-insensitive file system.
 */
export class CaseCollisions {
	private readonly seen = new Map<string, string>();

	/** The problem with adding `path` (and its folders), or undefined. */
	add(path: string): string | undefined {
		const parts = path.split('/');
		for (let length = 1; length <= parts.length; length++) {
			const prefix = parts.slice(0, length).join('/');
			const folded = prefix.normalize('NFC').toLowerCase();
			const earlier = this.seen.get(folded);
			if (earlier === undefined) this.seen.set(folded, prefix);
			else if (earlier !== prefix) return `${prefix} and ${earlier} differ only in case: they would be one file on Windows and macOS; rename one`;
		}
		return undefined;
	}
}

/** Every portability problem of a skill's paths, in their order. */
export function unportablePaths(paths: Iterable<string>): string[] {
	const collisions = new CaseCollisions();
	const problems: string[] = [];
	for (const path of paths) {
		const problem = unportableNameProblem(path) ?? collisions.add(path);
		if (problem) problems.push(problem);
	}
	return problems;
}
