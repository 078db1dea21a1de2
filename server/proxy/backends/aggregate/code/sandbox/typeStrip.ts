/**
 * TypeScript in a script: its type annotations stripped by amaro (Node's own type stripper, swc
 * compiled to WebAssembly) in strip-only mode, which writes each type over with spaces, so every
 * line and column of the stripped script is the script's own and its errors point where the model
 * wrote. Loaded on first use, once per worker, and used only for a script the engine could not
 * parse as JavaScript: plain JavaScript never pays for it. What stripping cannot erase (an enum,
 * a namespace, a parameter property…) is refused, saying to write it in plain JavaScript.
 */

type Amaro = typeof import('amaro');

let amaro: Promise<Amaro> | undefined;

/** The stripped source, or why it could not be stripped and where (1-based line and column of `source`). */
export type Stripped = { readonly code: string } | { readonly error: string; readonly line: number; readonly column: number };

/** amaro's error: `code` says whether the source was not TypeScript (InvalidSyntax) or not erasable (UnsupportedSyntax). */
interface StripError {
	readonly code?: string;
	readonly message?: string;
	/** 1-based. */
	readonly startLine?: number;
	/** 0-based. */
	readonly startColumn?: number;
}

export async function stripTypes(source: string): Promise<Stripped> {
	const { transformSync } = await (amaro ??= import('amaro'));
	const strip = (text: string) => transformSync(text, { mode: 'strip-only' }).code;
	try {
		return { code: strip(source) };
	} catch (thrown) {
		const { code, message, startLine, startColumn } = thrown as StripError;
		const where = { line: startLine ?? 1, column: columnOf(strip, source, thrown as StripError) ?? (startColumn ?? 0) + 1 };
		// amaro's "in strip-only mode" means nothing to the script's author.
		const said = String(message ?? thrown).replace(/ in (strip-only|type strip) mode/, '');
		if (code === 'UnsupportedSyntax') return { error: `SyntaxError: ${said}: run_code strips type annotations only, so write this in plain JavaScript`, ...where };
		return { error: `SyntaxError: ${said}`, ...where };
	}
}

/** What swc counts as more than one column (a tab is four, a wide character two or three), and the rest of the non-ASCII. */
const WIDE = /[^\x20-\x7e\n\r\u2028\u2029]/g;

/**
 * The 1-based column of `error` in `source`, counted in characters (UTF-16 units) as the engine
 * counts them; swc counts display columns. Found by stripping a copy in which every character is
 * one column wide (whitespace a space, any other an `x` per unit: valid wherever the original
 * was, in a string, a comment or a name), when it fails at the same line for the same reason.
 */
function columnOf(strip: (text: string) => string, source: string, error: StripError): number | undefined {
	const narrow = source.replace(WIDE, (unit) => (/\s/.test(unit) ? ' ' : 'x'));
	if (narrow === source) return undefined;
	try {
		strip(narrow);
	} catch (again) {
		const { code, message, startLine, startColumn } = again as StripError;
		if (code === error.code && message === error.message && startLine === error.startLine && startColumn !== undefined) return startColumn + 1;
	}
	return undefined;
}
