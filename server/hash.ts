/**
 * The SHA-256 of a text, in hex: the ids and keys Hangar derives from names and paths.
 * `node:crypto` is loaded by the first hash, not with the module that hashes: it costs a
 * command's start a few milliseconds, and the everyday commands hash nothing.
 */
export function sha256Hex(text: string): string {
	return process.getBuiltinModule('node:crypto').createHash('sha256').update(text).digest('hex');
}
