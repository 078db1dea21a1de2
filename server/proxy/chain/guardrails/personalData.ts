/**
 * Finds personal data in the strings of one message, each string on its own: e-mail addresses,
 * phone numbers, payment card numbers, IBANs and national ids. Every candidate a pattern finds
 * must pass its kind's own check (a checksum where the kind has one), so that order numbers,
 * timestamps, versions and hashes are let be:
 *
 * - e-mail: an address whose local part is not a documentation placeholder (`user@…`);
 * - phone: libphonenumber-js (its full metadata, loaded only when phones are looked for) finds
 *   and validates it; written internationally (`+44 …`, `0044 …`) or, for North American
 *   numbers, grouped 3-3-4 (`(415) 555-2671`): a bare run of digits is an id far more often;
 * - card: a network's prefix (IIN) and length, and the Luhn check;
 * - iban: its country's length and the mod-97 check;
 * - national_id: US SSN (written AAA-GG-SSSS, the SSA's never-issued ranges excluded), UK NINO
 *   (HMRC's prefix rules), NL BSN (the 11-test, and the word BSN or its Dutch names in the same
 *   string), ES DNI and NIE (the check letter), FR NIR (its key), IN Aadhaar (written 4-4-4, the
 *   Verhoeff check).
 *
 * Where two findings overlap, the first kind in that order keeps it.
 */
import type { PersonalDataKind } from '../../../../protocol/runConfig.js';
import { personalDataRule } from '../../../runspec/guardrails.js';
import type { Finding } from './scanner.js';
import type { TextSlot } from './texts.js';

/** A match in one string: its range. */
interface Match {
	readonly start: number;
	readonly end: number;
}

type Detector = (text: string) => Match[];

/** Finds the phone numbers of a text (libphonenumber-js's `findPhoneNumbersInText`). */
type PhoneFinder = (text: string, options: { defaultCountry: 'US' }) => Array<{ startsAt: number; endsAt: number; number: { countryCallingCode: string; nationalNumber: string } }>;

// ---- e-mail

const EMAIL = /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])/g;
/** Local parts that documentation uses for a made-up address. */
const PLACEHOLDER_LOCAL = new Set(['user', 'username', 'name', 'email', 'test', 'example', 'someone', 'somebody', 'foo', 'bar', 'me', 'you', 'your', 'your.name', 'yourname', 'john.doe', 'jane.doe', 'johndoe', 'janedoe', 'first.last', 'firstname.lastname', 'noreply', 'no-reply']);

const email: Detector = (text) => {
	if (!text.includes('@')) return [];
	const found: Match[] = [];
	for (const match of text.matchAll(EMAIL)) {
		const local = match[0].slice(0, match[0].indexOf('@')).toLowerCase();
		// `git@github.com:org/repo` is an SSH remote, not someone's address.
		if (!PLACEHOLDER_LOCAL.has(local) && text[match.index + match[0].length] !== ':') found.push({ start: match.index, end: match.index + match[0].length });
	}
	return found;
};

// ---- digits grouped by one kind of separator

/** A run of digits, alone or grouped by single spaces or dashes (one kind per run), 12 to 19 of them: a card's shape. */
const DIGIT_RUN = /(?<![\w.,+/-]|\d[ -])\d(?:\d|[ -](?=\d)){11,22}(?![\w/]|[.,]\d|-\d)/g;

function luhn(digits: string): boolean {
	let sum = 0;
	for (let index = 0; index < digits.length; index++) {
		let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
		if (index % 2 === 1) {
			digit *= 2;
			if (digit > 9) digit -= 9;
		}
		sum += digit;
	}
	return sum % 10 === 0;
}

/** The card networks' prefixes (IIN ranges) and lengths. */
function cardNetwork(digits: string): boolean {
	const length = digits.length;
	const two = Number(digits.slice(0, 2));
	const four = Number(digits.slice(0, 4));
	if (digits[0] === '4') return length === 13 || length === 16 || length === 19; // Visa
	if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return length === 16; // Mastercard
	if (two === 34 || two === 37) return length === 15; // American Express
	if (four === 6011 || two === 65 || (four >= 6440 && four <= 6499)) return length >= 16 && length <= 19; // Discover
	if (four >= 3528 && four <= 3589) return length >= 16 && length <= 19; // JCB
	if (two === 36 || two === 38 || two === 39 || (four >= 3000 && four <= 3059)) return length >= 14 && length <= 19; // Diners Club
	if (two === 62) return length >= 16 && length <= 19; // UnionPay
	return false;
}

const card: Detector = (text) => {
	const found: Match[] = [];
	for (const match of text.matchAll(DIGIT_RUN)) {
		const run = match[0];
		if (run.includes(' ') && run.includes('-')) continue;
		const digits = run.replace(/[ -]/g, '');
		if (digits.length >= 13 && digits.length <= 19 && cardNetwork(digits) && luhn(digits)) found.push({ start: match.index, end: match.index + run.length });
	}
	return found;
};

// ---- IBAN

/** Each country's IBAN length (the SWIFT IBAN registry). */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
	'AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HN28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30'
		.split(' ')
		.map((entry) => [entry.slice(0, 2), Number(entry.slice(2))] as const),
);
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g;

function mod97(digits: string): number {
	let rest = 0;
	for (let index = 0; index < digits.length; index++) rest = (rest * 10 + digits.charCodeAt(index) - 48) % 97;
	return rest;
}

function validIban(compact: string): boolean {
	if (IBAN_LENGTHS.get(compact.slice(0, 2)) !== compact.length) return false;
	const rearranged = compact.slice(4) + compact.slice(0, 4);
	return mod97(rearranged.replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55))) === 1;
}

const iban: Detector = (text) => {
	const found: Match[] = [];
	for (const match of text.matchAll(IBAN)) {
		if (validIban(match[0].replace(/ /g, ''))) found.push({ start: match.index, end: match.index + match[0].length });
	}
	return found;
};

// ---- national ids

const SSN = /(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])/g;
/** HMRC: the first letter not D, F, I, Q, U or V; the second not those nor O; BG, GB, KN, NK, NT, TN and ZZ never issued. */
const NINO = /(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g;
const BSN = /(?<![\w.,+/-])\d{9}(?![\w/]|[.,-]\d)/g;
/** A bare nine digits is a BSN only where the text says so: one id in eleven passes the 11-test by chance. */
const BSN_CUE = /\bBSN\b|burgerservicenummer|sofinummer|citizen service number/i;
const DNI = /(?<![A-Za-z0-9])(?:\d{8}|[XYZ]\d{7})-?[TRWAGMYFPDXBNJZSQVHLCKE](?![A-Za-z0-9])/g;
const NIR = /(?<![\w-])[12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\w-])/g;
const AADHAAR = /(?<![\w-])[2-9]\d{3} \d{4} \d{4}(?![\w-])/g;

function bsnElevenTest(digits: string): boolean {
	let sum = 0;
	for (let index = 0; index < 8; index++) sum += (digits.charCodeAt(index) - 48) * (9 - index);
	return digits !== '000000000' && (sum - (digits.charCodeAt(8) - 48)) % 11 === 0;
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
function dniLetter(id: string): boolean {
	const compact = id.replace('-', '');
	const number = Number(compact.slice(0, -1).replace(/^[XYZ]/, (letter) => String('XYZ'.indexOf(letter))));
	return DNI_LETTERS[number % 23] === compact[compact.length - 1];
}

function nirKey(id: string): boolean {
	const compact = id.replace(/ /g, '');
	// Corsica's departments 2A and 2B count as 19 and 18.
	const body = compact.slice(0, 13).replace('2A', '19').replace('2B', '18');
	return 97 - Number(BigInt(body) % 97n) === Number(compact.slice(13));
}

const VERHOEFF_D = [
	[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
	[5, 9, 8, 7, 6, 0, 4, 3, 2, 1], [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VERHOEFF_P = [
	[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
	[9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1], [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];
function verhoeff(digits: string): boolean {
	let check = 0;
	for (let index = 0; index < digits.length; index++) check = VERHOEFF_D[check]![VERHOEFF_P[index % 8]![digits.charCodeAt(digits.length - 1 - index) - 48]!]!;
	return check === 0;
}

const NATIONAL_IDS: ReadonlyArray<readonly [pattern: RegExp, valid: (id: string, text: string) => boolean]> = [
	[SSN, () => true],
	[NINO, () => true],
	[BSN, (id, text) => bsnElevenTest(id) && BSN_CUE.test(text)],
	[DNI, dniLetter],
	[NIR, nirKey],
	[AADHAAR, (id) => verhoeff(id.replace(/ /g, ''))],
];

const nationalId: Detector = (text) => {
	const found: Match[] = [];
	for (const [pattern, valid] of NATIONAL_IDS) {
		for (const match of text.matchAll(pattern)) if (valid(match[0], text)) found.push({ start: match.index, end: match.index + match[0].length });
	}
	return found;
};

// ---- phone

/** Written as a phone number: with a country code, or grouped as North American numbers are (`(415) 555-2671`, `415.555.2671`). */
const WRITTEN_AS_PHONE = /^(?:\+|00)|^(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;

function phoneDetector(find: PhoneFinder): Detector {
	return (text) => {
		const found: Match[] = [];
		for (const { startsAt, endsAt, number } of find(text, { defaultCountry: 'US' })) {
			// The 555 exchange is North America's one for films and documentation (`+1 415 555 1234`).
			if (number.countryCallingCode === '1' && number.nationalNumber.slice(3, 6) === '555') continue;
			// Glued to a word (`ORD-2026-004512`), it is part of an id.
			if (WRITTEN_AS_PHONE.test(text.slice(startsAt, endsAt)) && !/[\w-]/.test(text[startsAt - 1] ?? ' ')) found.push({ start: startsAt, end: endsAt });
		}
		return found;
	};
}

/** The detectors by kind, in the order that settles an overlap. */
const ORDER: readonly PersonalDataKind[] = ['card', 'iban', 'national_id', 'email', 'phone'];
/** Whether a text can hold a kind at all: a test far cheaper than the patterns. */
const CUES: Readonly<Record<PersonalDataKind, RegExp>> = {
	card: /\d{4}/,
	iban: /[A-Z]{2}\d\d/,
	national_id: /\d\d/,
	email: /@/,
	phone: /\d{3}/,
};

export class PersonalDataScanner {
	private constructor(private readonly detectors: ReadonlyArray<readonly [rule: string, cue: RegExp, detect: Detector]>) {}

	/** A scanner for `kinds`; libphonenumber-js is loaded only when phones are among them. */
	static async create(kinds: readonly PersonalDataKind[]): Promise<PersonalDataScanner> {
		const phone = kinds.includes('phone') ? phoneDetector((await import('libphonenumber-js/max')).findPhoneNumbersInText as PhoneFinder) : undefined;
		const byKind: Record<PersonalDataKind, Detector | undefined> = { card, iban, national_id: nationalId, email, phone };
		return new PersonalDataScanner(ORDER.filter((kind) => kinds.includes(kind)).map((kind) => [personalDataRule(kind), CUES[kind], byKind[kind]!] as const));
	}

	scan(slots: readonly TextSlot[]): Finding[] {
		const findings: Finding[] = [];
		slots.forEach((slot, index) => {
			const taken: Match[] = [];
			for (const [rule, cue, detect] of this.detectors) {
				if (!cue.test(slot.text)) continue;
				for (const match of detect(slot.text)) {
					if (taken.some((other) => match.start < other.end && other.start < match.end)) continue;
					taken.push(match);
					findings.push({ rule, ranges: [{ slot: index, start: match.start, end: match.end }] });
				}
			}
		});
		return findings;
	}
}
