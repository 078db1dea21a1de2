/**
 * Finds secrets in the strings of one message. The rules read four texts made of them:
 *
 * - the strings one per line (what each string holds, and a key beside its value);
 * - the values end to end (no keys, no content block's `type`), for a secret split across two
 *   strings (only the matches that cross a boundary are new);
 * - what looks encoded, decoded: base64 runs and percent-encoded runs that decode to text (a
 *   secret inside a Basic header, a docker config, a URL's query);
 * - for the user's own secret values, the same values (and the keys apart) without whitespace, where each
 *   value is looked for in its raw, URL-encoded and base64 forms (ownSecrets.ts).
 *
 * A finding says which parts of which strings it covers, so that a redaction replaces just them
 * (an encoded run is replaced whole).
 */
import type { SecretRules, Detection } from './rules.js';
import { compact, type OwnSecrets } from './ownSecrets.js';
import type { TextSlot } from './texts.js';

/** A part of one string: the slot's index and a range of its text. */
export interface SlotRange {
	readonly slot: number;
	readonly start: number;
	readonly end: number;
}

export interface Finding {
	readonly rule: string;
	readonly ranges: readonly SlotRange[];
}

/** A run of the base64 alphabets this long or longer may hold a secret. */
const MIN_BASE64_RUN = 20;
/** Each byte's value in the base64 alphabets (both: `+/` and `-_`), -1 for the others (every byte of a character past ASCII). */
const BASE64_VALUES = new Int8Array(256).fill(-1);
for (const [index, char] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64_VALUES[char.charCodeAt(0)] = index;
BASE64_VALUES['-'.charCodeAt(0)] = 62;
BASE64_VALUES['_'.charCodeAt(0)] = 63;
/**
 * The base64 search reads a text's UTF-8 bytes (a byte costs a third fewer instructions than a
 * `charCodeAt`), written into this buffer, kept from one text to the next (a scan is synchronous)
 * up to KEPT_UTF8_BYTES.
 */
let utf8 = new Uint8Array(64 * 1024);
const KEPT_UTF8_BYTES = 256 * 1024;
const encoder = new TextEncoder();
/** Runs holding percent escapes (or form-encoded spaces). */
const PERCENT_RUN = /[^\s"'<>]*%[0-9A-Fa-f]{2}[^\s"'<>]*/g;
/** How a redaction marker starts (middleware.ts): a rule matching one matches no secret. */
const MARKER_START = '[REDACTED:';

/** A text made of some slots' texts, each after its separator, and where each starts in it. */
class Joined {
	text = '';
	/** The slot of each piece. */
	readonly slots: number[] = [];
	readonly starts: number[] = [];
	readonly lengths: number[] = [];

	/** Adds `piece`, the text of `slot`, after `separator` when it is not the first. */
	add(slot: number, piece: string, separator: string): void {
		if (this.slots.length) this.text += separator;
		this.slots.push(slot);
		this.starts.push(this.text.length);
		this.lengths.push(piece.length);
		this.text += piece;
	}

	/** The piece holding offset `at`. */
	pieceAt(at: number): number {
		let low = 0;
		let high = this.starts.length - 1;
		while (low < high) {
			const middle = (low + high + 1) >> 1;
			if (this.starts[middle]! <= at) low = middle;
			else high = middle - 1;
		}
		return low;
	}
}

/** The index in `text` of its `count`-th character that is not whitespace (its length past the last). */
function offsetOfNonSpace(text: string, count: number): number {
	let seen = 0;
	for (let index = 0; index < text.length; index++) {
		if (/\s/.test(text[index]!)) continue;
		if (seen === count) return index;
		seen++;
	}
	return text.length;
}

/** A decoded run: its slot, its range there, and its decoded text. */
interface DecodedRun extends SlotRange {
	readonly text: string;
}

/**
 * What `bytes[start, end)`, base64, decodes to, or undefined at its first byte that is not
 * printable ASCII: most runs are hashes, ids and paths, given up after a byte or two, with no
 * buffer made for them.
 */
function printableBase64(bytes: Uint8Array, start: number, end: number): string | undefined {
	let decoded = '';
	let bits = 0;
	let buffer = 0;
	for (let index = start; index < end; index++) {
		buffer = ((buffer << 6) | BASE64_VALUES[bytes[index]!]!) & 0xffff;
		bits += 6;
		if (bits < 8) continue;
		bits -= 8;
		const byte = (buffer >> bits) & 0xff;
		if (byte < 0x20 ? byte !== 9 && byte !== 10 && byte !== 13 : byte > 0x7e) return undefined;
		decoded += String.fromCharCode(byte);
	}
	return decoded;
}

/** A buffer of at least `size` bytes: the kept one, grown up to KEPT_UTF8_BYTES, or one of its own. */
function bufferOf(size: number): Uint8Array {
	if (utf8.length >= size) return utf8;
	const bytes = new Uint8Array(size);
	if (size <= KEPT_UTF8_BYTES) utf8 = bytes;
	return bytes;
}

/** The UTF-16 offsets of increasing offsets into a text's UTF-8 bytes, counted on from the last one asked for. */
class Utf16Offsets {
	#byte = 0;
	#unit = 0;

	constructor(private readonly bytes: Uint8Array) {}

	of(byte: number): number {
		for (; this.#byte < byte; this.#byte++) {
			const lead = this.bytes[this.#byte]!;
			// A continuation byte starts no character; a four-byte character is two UTF-16 units.
			if ((lead & 0xc0) !== 0x80) this.#unit += lead >= 0xf0 ? 2 : 1;
		}
		return this.#unit;
	}
}

function decodedRuns(slots: readonly TextSlot[]): DecodedRun[] {
	const runs: DecodedRun[] = [];
	for (let index = 0; index < slots.length; index++) {
		const { text } = slots[index]!;
		base64Runs(text, index, runs);
		if (!text.includes('%')) continue;
		for (const match of text.matchAll(PERCENT_RUN)) {
			try {
				runs.push({ slot: index, start: match.index, end: match.index + match[0].length, text: decodeURIComponent(match[0].replace(/\+/g, ' ')) });
			} catch {
				// Not percent-encoding after all (a lone `%`): the text itself was scanned.
			}
		}
	}
	return runs;
}

/**
 * Adds to `runs` the runs of the base64 alphabets in `text` (with up to two `=` after them) that
 * decode to printable text. A run long enough to count ends at or past `start + MIN_BASE64_RUN - 1`
 * for its first possible `start`; reading back from there, a byte not of the alphabets moves
 * `start` past it (no run from before it is long enough): ordinary words cost a read or two per
 * MIN_BASE64_RUN characters, and none is read twice. [start, known) is of the alphabets. The
 * bytes are UTF-8: a character past ASCII is of no alphabet whatever its bytes, and offsets are
 * turned back into the text's where a run is kept.
 */
function base64Runs(text: string, slot: number, runs: DecodedRun[]): void {
	if (text.length < MIN_BASE64_RUN) return;
	// A byte a character for ASCII; past it, UTF-8 takes at most three bytes per UTF-16 unit.
	let bytes = bufferOf(text.length);
	let encoded = encoder.encodeInto(text, bytes);
	if (encoded.read < text.length) {
		bytes = bufferOf(text.length * 3);
		encoded = encoder.encodeInto(text, bytes);
	}
	const length = encoded.written;
	const offsets = length === text.length ? undefined : new Utf16Offsets(bytes);
	let start = 0;
	let known = 0;
	while (start + MIN_BASE64_RUN <= length) {
		let back = start + MIN_BASE64_RUN - 1;
		const probe = back;
		while (back >= known && BASE64_VALUES[bytes[back]!]! >= 0) back--;
		if (back >= known) {
			start = back + 1;
			known = probe + 1;
			continue;
		}
		let at = probe + 1;
		while (at < length && BASE64_VALUES[bytes[at]!]! >= 0) at++;
		let end = at;
		while (end < length && end - at < 2 && bytes[end] === 61) end++;
		const decoded = printableBase64(bytes, start, at);
		if (decoded !== undefined && decoded.length >= 8) runs.push({ slot, start: offsets ? offsets.of(start) : start, end: offsets ? offsets.of(end) : end, text: decoded });
		// `at` is not of the alphabets.
		start = known = at + 1;
	}
}

/**
 * What comes before a slot's text in the strings one per line: `=` after its key (a key and its
 * value as `key=value`, the shape the rules know: `AWS_SECRET_ACCESS_KEY=…`), else a line break.
 */
function separatorBefore(slots: readonly TextSlot[], index: number): string {
	const previous = slots[index - 1];
	const slot = slots[index]!;
	return previous?.key && !slot.key && slot.depth === previous.depth ? '=' : '\n';
}

/** Whether a slot is a value joined end to end with the others: not a key, nor a content block's `type`. */
function isJoinedValue(slot: TextSlot): boolean {
	return !slot.key && slot.last !== 'type';
}

export class SecretScanner {
	constructor(
		private readonly rules: SecretRules,
		private readonly own: OwnSecrets | undefined,
	) {}

	scan(slots: readonly TextSlot[]): Finding[] {
		if (!slots.length) return [];
		const findings: Finding[] = [];
		// The strings one per line (separatorBefore). The common case finds nothing: only the text
		// is made, and where its pieces start only for a detection to place (a joined text's arrays
		// were a third of a small message's scan).
		let text = '';
		let valueCount = 0;
		for (let index = 0; index < slots.length; index++) {
			if (index) text += separatorBefore(slots, index);
			text += slots[index]!.text;
			if (isJoinedValue(slots[index]!)) valueCount++;
		}
		const detections = this.detect(text);
		if (detections.length) {
			const lines = new Joined();
			for (let index = 0; index < slots.length; index++) lines.add(index, slots[index]!.text, separatorBefore(slots, index));
			for (const detection of detections) findings.push(this.inJoined(lines, detection));
		}
		// The values end to end, without keys: a split secret's parts have keys between them, and
		// content blocks' `type` too (`text`, which would join the parts of a token into a longer
		// one). Only the matches that cross a boundary are new (most messages hold one value).
		if (valueCount > 1) {
			const values = new Joined();
			for (let index = 0; index < slots.length; index++) if (isJoinedValue(slots[index]!)) values.add(index, slots[index]!.text, '');
			for (const detection of this.detect(values.text)) {
				if (values.pieceAt(detection.start) !== values.pieceAt(detection.end - 1)) findings.push(this.inJoined(values, detection));
			}
		}

		const decoded = decodedRuns(slots);
		if (decoded.length) {
			const joined = new Joined();
			for (const run of decoded) joined.add(run.slot, run.text, '\n');
			for (const detection of this.detect(joined.text)) {
				const { slot, start, end } = decoded[joined.pieceAt(detection.start)]!;
				findings.push({ rule: detection.rule, ranges: [{ slot, start, end }] });
			}
		}

		if (this.own?.size) {
			const compactedValues = new Joined();
			const compactedKeys = new Joined();
			for (let index = 0; index < slots.length; index++) {
				const slot = slots[index]!;
				if (slot.key) compactedKeys.add(index, compact(slot.text), '');
				else if (isJoinedValue(slot)) compactedValues.add(index, compact(slot.text), '');
			}
			for (const compacted of [compactedValues, compactedKeys]) {
				for (const detection of this.own.detect(compacted.text)) findings.push(this.inCompacted(compacted, slots, detection));
			}
		}
		return findings.length ? unique(findings) : findings;
	}

	/** The rules' detections in a joined text, but for the markers of an earlier redaction. */
	private detect(text: string): Detection[] {
		const detections = this.rules.detect(text);
		return detections.length ? detections.filter(({ start }) => !text.startsWith(MARKER_START, start)) : detections;
	}

	/** The slot ranges a detection in a joined text covers. */
	private inJoined(joined: Joined, { rule, start, end }: Detection): Finding {
		const ranges: SlotRange[] = [];
		for (let piece = joined.pieceAt(start); piece <= joined.pieceAt(Math.max(start, end - 1)); piece++) {
			const pieceStart = joined.starts[piece]!;
			const from = Math.max(start, pieceStart) - pieceStart;
			const to = Math.min(end, pieceStart + joined.lengths[piece]!) - pieceStart;
			if (to > from) ranges.push({ slot: joined.slots[piece]!, start: from, end: to });
		}
		return { rule, ranges };
	}

	/** The same for a detection in compacted texts: offsets there are counted without whitespace. */
	private inCompacted(joined: Joined, slots: readonly TextSlot[], { rule, start, end }: Detection): Finding {
		const ranges: SlotRange[] = [];
		for (let piece = joined.pieceAt(start); piece <= joined.pieceAt(end - 1); piece++) {
			const pieceStart = joined.starts[piece]!;
			const from = Math.max(start, pieceStart) - pieceStart;
			const to = Math.min(end, pieceStart + joined.lengths[piece]!) - pieceStart;
			if (to <= from) continue;
			const slot = joined.slots[piece]!;
			const text = slots[slot]!.text;
			ranges.push({ slot, start: offsetOfNonSpace(text, from), end: offsetOfNonSpace(text, to - 1) + 1 });
		}
		return { rule, ranges };
	}
}

function unique(findings: Finding[]): Finding[] {
	const seen = new Set<string>();
	return findings.filter((finding) => {
		const key = `${finding.rule} ${finding.ranges.map(({ slot, start, end }) => `${slot}:${start}-${end}`).join(' ')}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
}
