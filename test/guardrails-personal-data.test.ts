/**
 * The personal data scanner on its own, against the labelled set (test/fixtures/guardrails/
 * personal-data.json, written before the detector): every kind found in the part it was tuned
 * on and in the held-out part, no false flag on the negatives (UUIDs, hashes, versions,
 * timestamps, order numbers, SQL ids), and none in the real tool definitions of 68 published
 * servers. Through a real proxy: guardrails-proxy.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PersonalDataScanner } from '../server/proxy/chain/guardrails/personalData.js';
import { collectTexts } from '../server/proxy/chain/guardrails/texts.js';
import { PERSONAL_DATA_KINDS, personalDataRule } from '../server/runspec/guardrails.js';
import type { PersonalDataKind } from '../protocol/runConfig.js';

interface LabelledCase {
	readonly id: string;
	readonly kind: PersonalDataKind | 'none';
	readonly values: readonly string[];
	readonly message: unknown;
}
const labelled = JSON.parse(readFileSync(new URL('./fixtures/guardrails/personal-data.json', import.meta.url), 'utf8')) as Record<'tune' | 'held_out', LabelledCase[]>;
const corpus = JSON.parse(readFileSync(new URL('./fixtures/search-eval/corpus.json', import.meta.url), 'utf8')) as { servers: Record<string, { tools: unknown[] }> };
const KINDS = Object.keys(PERSONAL_DATA_KINDS) as PersonalDataKind[];
const scanner = await PersonalDataScanner.create(KINDS);

/** Each finding of a message: its rule and the text it covers. */
function found(message: unknown, using = scanner): Array<{ rule: string; text: string }> {
	const { slots } = collectTexts(message, 1024 * 1024);
	return using.scan(slots).map(({ rule, ranges: [range] }) => ({ rule, text: slots[range!.slot]!.text.slice(range!.start, range!.end) }));
}

/** Per kind: the values found of those labelled, and the findings no label names. */
function score(cases: readonly LabelledCase[]): { recall: Record<string, [found: number, of: number]>; falseFlags: string[] } {
	const recall: Record<string, [number, number]> = {};
	const falseFlags: string[] = [];
	for (const labelledCase of cases) {
		const findings = found(labelledCase.message);
		if (labelledCase.kind !== 'none') {
			const rule = personalDataRule(labelledCase.kind);
			const tally = (recall[labelledCase.kind] ??= [0, 0]);
			for (const value of labelledCase.values) {
				tally[1]++;
				if (findings.some((finding) => finding.rule === rule && finding.text === value)) tally[0]++;
			}
		}
		for (const finding of findings) if (!labelledCase.values.includes(finding.text)) falseFlags.push(`${labelledCase.id}: ${finding.rule}`);
	}
	return { recall, falseFlags };
}

describe('the labelled set', () => {
	it('holds 50 values of each kind and 80 negatives, a third held out', () => {
		const all = [...labelled.tune, ...labelled.held_out];
		for (const kind of KINDS) expect(all.filter((labelledCase) => labelledCase.kind === kind).length).toBe(50);
		expect(all.filter((labelledCase) => labelledCase.kind === 'none').length).toBe(80);
		expect(labelled.held_out.length).toBe(110);
	});

	// National ids: a bare nine-digit Dutch BSN is looked for only where the text names it (one
	// number in eleven passes its check by chance), so the set's BSNs without that word are missed.
	it.each(['tune', 'held_out'] as const)('finds every e-mail, phone, card and IBAN, most national ids, and flags nothing else (%s)', (part) => {
		const { recall, falseFlags } = score(labelled[part]);
		for (const kind of ['email', 'phone', 'card', 'iban']) expect(recall[kind]![0], kind).toBe(recall[kind]![1]);
		expect(recall.national_id![0] / recall.national_id![1]).toBeGreaterThanOrEqual(0.75);
		expect(falseFlags).toEqual([]);
	});
});

describe('each kind', () => {
	it.each([
		['email', 'write to ana.silva@uni-hamburg.de today', 'ana.silva@uni-hamburg.de'],
		['phone', 'call (617) 253-1000 or +49 30 901820', '(617) 253-1000'],
		['card', 'card 3782 822463 10005 on file', '3782 822463 10005'],
		['iban', 'pay to DE89 3704 0044 0532 0130 00 by Friday', 'DE89 3704 0044 0532 0130 00'],
		['national_id', 'NINO QQ 12 34 56 C, DNI 12345678Z', '12345678Z'],
	] as const)('finds %s', (kind, text, value) => {
		expect(found({ text }).filter((finding) => finding.rule === personalDataRule(kind)).map((finding) => finding.text)).toContain(value);
	});

	it.each([
		['a card number failing Luhn', 'card 4111 1111 1111 1112'],
		['an IBAN with a wrong check', 'IBAN DE88 3704 0044 0532 0130 00'],
		['an IBAN of the wrong length', 'IBAN GB82 WEST 1234 5698 7654 3'],
		['a DNI with the wrong letter', 'DNI 12345678A'],
		['a never-issued SSN', 'SSN 666-12-3456 and 900-12-3456'],
		['a placeholder address and an SSH remote', 'user@example.com or git@github.com:org/repo.git'],
		['a documentation phone number', 'call +1 415 555 1234'],
		['a bare run of digits', 'order 4155552671 and id 123456782'],
	])('passes %s', (_what, text) => {
		expect(found({ text })).toEqual([]);
	});

	it('looks only for the kinds asked for', async () => {
		const cardsOnly = await PersonalDataScanner.create(['card']);
		expect(found({ text: 'ana.silva@uni-hamburg.de, 4111 1111 1111 1111' }, cardsOnly)).toEqual([{ rule: 'pii.card', text: '4111 1111 1111 1111' }]);
	});
});

describe('benign text', () => {
	it('finds no personal data in the 1,483 tool definitions of 68 published servers', () => {
		const findings = Object.values(corpus.servers).flatMap((server) => server.tools.flatMap((tool) => found(tool)));
		expect(findings).toEqual([]);
	});
});
