/**
 * The secret scanner on its own: every secret of the labelled set (test/fixtures/guardrails/
 * secrets.json, written before the scanner was tuned) is found and redacted away, the user's
 * own secret values in every form they travel in too, and the real tool definitions of 68
 * published servers hold none. The middleware and its doors: guardrails-proxy.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { Cues, gatesOf, neededCharacters } from '../server/proxy/chain/guardrails/cues.js';
import { SecretRules } from '../server/proxy/chain/guardrails/rules.js';
import { OwnSecrets } from '../server/proxy/chain/guardrails/ownSecrets.js';
import { SecretScanner, type Finding } from '../server/proxy/chain/guardrails/scanner.js';
import { collectTexts, rewriteTexts, type TextSlot } from '../server/proxy/chain/guardrails/texts.js';
import { redactionMarker } from '../server/proxy/chain/guardrails/middleware.js';
import { HANGAR_SECRET_RULE, SECRET_RULES } from '../server/runspec/guardrails.js';

interface LabelledCase {
	readonly id: string;
	readonly kind: string;
	readonly secret: string;
	readonly message: unknown;
}
const labelled = JSON.parse(readFileSync(new URL('./fixtures/guardrails/secrets.json', import.meta.url), 'utf8')) as {
	cases: LabelledCase[];
	own: LabelledCase[];
	hangar_secrets: Record<string, string>;
};
const corpus = JSON.parse(readFileSync(new URL('./fixtures/search-eval/corpus.json', import.meta.url), 'utf8')) as { servers: Record<string, { tools: unknown[] }> };

const rules = new SecretRules();
const scanner = new SecretScanner(rules, new OwnSecrets(Object.values(labelled.hangar_secrets)));
const MAX = 1024 * 1024;

function scan(message: unknown): { slots: TextSlot[]; findings: Finding[] } {
	const { slots } = collectTexts(message, MAX);
	return { slots, findings: scanner.scan(slots) };
}

/** The message with every finding replaced by its marker, as the middleware's `redact` does. */
function redact(message: unknown): unknown {
	const { slots, findings } = scan(message);
	const bySlot = new Map<number, string>();
	const ranges = findings.flatMap((finding) => finding.ranges.map((range) => ({ ...range, rule: finding.rule })));
	for (const index of new Set(ranges.map((range) => range.slot))) {
		let text = slots[index]!.text;
		const own = ranges.filter((range) => range.slot === index).sort((a, b) => b.start - a.start);
		let floor = Infinity;
		for (const range of own) {
			const end = Math.min(range.end, floor);
			if (end <= range.start) continue;
			text = text.slice(0, range.start) + redactionMarker(range.rule) + text.slice(end);
			floor = range.start;
		}
		bySlot.set(index, text);
	}
	return rewriteTexts(message, [...bySlot].map(([index, text]) => [slots[index]!, text] as const));
}

describe('the labelled set', () => {
	it('holds at least 50 secrets of the kinds the issue names, and a dozen leaks of the user\'s own', () => {
		expect(labelled.cases.length).toBeGreaterThanOrEqual(50);
		for (const kind of ['aws-access-key-id', 'gcp-api-key', 'azure-storage-key', 'github-token', 'gitlab-token', 'slack-token', 'stripe-key', 'npm-token', 'private-key', 'jwt', 'connection-string-password']) {
			expect(labelled.cases.some((entry) => entry.kind === kind), kind).toBe(true);
		}
		expect(labelled.own.length).toBeGreaterThanOrEqual(10);
	});

	it.each(labelled.cases.map((entry) => [entry.id, entry] as const))('finds %s, and its redaction leaves nothing to find', (_id, entry) => {
		const { findings } = scan(entry.message);
		expect(findings.length).toBeGreaterThan(0);
		for (const finding of findings) expect(SECRET_RULES).toHaveProperty(finding.rule);
		const cleaned = redact(entry.message);
		expect(scan(cleaned).findings).toEqual([]);
		expect(JSON.stringify(cleaned)).toContain('[REDACTED:');
	});

	it.each(labelled.own.map((entry) => [entry.id, entry] as const))("finds the user's own secret in %s, and its redaction removes it", (_id, entry) => {
		const { findings } = scan(entry.message);
		expect(findings.map((finding) => finding.rule)).toContain(HANGAR_SECRET_RULE);
		const cleaned = redact(entry.message);
		expect(scan(cleaned).findings).toEqual([]);
		expect(JSON.stringify(cleaned)).not.toContain(entry.secret);
	});

	it('finds none of the user\'s values once they are not among the secrets looked for', () => {
		const withoutOwn = new SecretScanner(rules, undefined);
		const raw = labelled.own.find((entry) => entry.id === 'own-1')!;
		expect(withoutOwn.scan(collectTexts(raw.message, MAX).slots)).toEqual([]);
	});
});

describe('benign text', () => {
	it('finds no secret in the 1,483 tool definitions of 68 published servers (descriptions, schemas, names)', () => {
		const tools = Object.values(corpus.servers).flatMap((server) => server.tools);
		expect(tools.length).toBe(1483);
		const found = tools.flatMap((tool) => scan(tool).findings.map((finding) => `${(tool as { name: string }).name}: ${finding.rule}`));
		expect(found).toEqual([]);
	});

	it('finds nothing in ordinary tool results: file listings, hashes, UUIDs, URLs, base64 images skipped', () => {
		const result = {
			content: [
				{ type: 'text', text: 'commit 3f9a1c2e8b7d6f5a4c3b2a1908f7e6d5c4b3a291\nAuthor: Dev <dev@example.com>\n\n    fix: handle empty lists' },
				{ type: 'text', text: 'id 6f1c1f0e-8a4b-4f5e-9a77-2c3f1b0d9e84, sha256 9b74c9897bac770ffc029102a200c5de3a5b2e3f0f8b6e7a1c4d5e6f7a8b9c0d' },
				{ type: 'text', text: 'See https://example.com/docs?page=2&sort=name%20asc and postgres://localhost/app' },
				{ type: 'image', mimeType: 'image/png', data: Buffer.from(`ghp_${'a'.repeat(36)}`).toString('base64') },
			],
		};
		const { findings } = scan(result);
		expect(findings).toEqual([]);
		expect(collectTexts(result, MAX).binary).toBe(1);
	});

	it('settles ordinary text with searches alone: no rule runs an expression over every text', () => {
		// Prose, paths, a URL, JSON and a hash: every rule's cue has a gate here or a key that a
		// search rules out, and no cue whose expression runs over the text (`@`, `_`, `-` open those).
		const line = 'The build reads src/config/settings.json, resolves 42 modules and writes dist/index.js; see https://example.com/docs/build?section=output for details. {"id": 1842, "path": "/home/dev/project/README.md", "sha": "3f9a1c2e8b7d6f5a4c3b2a1908f7e6d5c4b3a291"}\n';
		const texts = ['message=hello from the benchmark', line.repeat(6), 'Settings: a good access pattern is its count, and CRETE or UNTIL'];
		const test = vi.spyOn(RegExp.prototype, 'test');
		const exec = vi.spyOn(RegExp.prototype, 'exec');
		try {
			for (const text of texts) expect(rules.detect(text), text).toEqual([]);
			expect(test.mock.calls.length + exec.mock.calls.length).toBe(0);
		} finally {
			test.mockRestore();
			exec.mockRestore();
		}
	});
});

describe('encoded runs', () => {
	it('finds a base64 run wherever it starts and however long the words before it are (runs are looked for by reading back from 20 characters ahead)', () => {
		const encoded = Buffer.from(`token ghp_${'c'.repeat(36)}`).toString('base64');
		for (let before = 0; before <= 45; before++) {
			const words = 'ab cd efghij klmnopqrstuvwxy z0 1234567 89abcdefghijklmnopq rs '.slice(0, before);
			for (const text of [`${words} ${encoded}`, `${words} ${encoded} and the rest`, `${words}.${encoded}.`]) {
				const { findings } = scan({ content: [{ type: 'text', text }] });
				const start = text.indexOf(encoded);
				expect(findings, `${before}: ${text}`).toEqual([{ rule: 'github-token', ranges: [{ slot: 4, start, end: start + encoded.length }] }]);
			}
		}
	});

	it('places a base64 run after characters past ASCII (two and four UTF-8 bytes, a lone surrogate) where the text has it', () => {
		const encoded = Buffer.from(`token ghp_${'c'.repeat(36)}`).toString('base64');
		// The last one takes more bytes than the buffer kept between texts starts with.
		for (const before of ['héllo wörld', '日本語のテキスト', 'emoji 😀🎉 here', 'lone \ud800 surrogate', 'ü'.repeat(40), 'ü'.repeat(40_000)]) {
			const text = `${before} ${encoded} ünd 😀`;
			const { findings } = scan({ content: [{ type: 'text', text }] });
			const start = text.indexOf(encoded);
			expect(findings, before).toEqual([{ rule: 'github-token', ranges: [{ slot: 4, start, end: start + encoded.length }] }]);
		}
	});

	it('finds both of two runs one character apart, and a run right after a 19-character one', () => {
		const first = Buffer.from(`token ghp_${'c'.repeat(36)}`).toString('base64');
		const second = Buffer.from(`key sk_live_${'d'.repeat(24)}`).toString('base64');
		for (const text of [`${first}.${second}`, `${'q'.repeat(19)}.${second}`, `${'q'.repeat(19)}${'.'.repeat(3)}${first} ${second}`]) {
			const rules = scan({ content: [{ type: 'text', text }] }).findings.map((finding) => finding.rule);
			expect(rules, text).toContain('stripe-key');
			if (text.includes(first)) expect(rules, text).toContain('github-token');
		}
	});
});

describe('the cues and their gates', () => {
	it('gate each alternative on a character every match of it holds, never on one a group, a class or a quantifier may leave out', () => {
		expect(neededCharacters('sk-ant-', false)).toEqual([...'sk-ant-']);
		expect(neededCharacters('shp(?:pa|ca|at|ss)_', false)).toEqual(['s', 'h', 'p', '_']);
		expect(neededCharacters('gh[pousr]_', false)).toEqual(['g', 'h', '_']);
		expect(neededCharacters(':\\/\\/[^\\s/@]*@', false)).toEqual([':', '/', '/', '@']);
		expect(neededCharacters(';\\s*(?:password|pwd)\\s*=', true)).toEqual([';', '=']);
		expect(neededCharacters('secret_?access_?key', true)).toEqual([]);
		expect(neededCharacters('a_{0,2}b-+c~*d\\dQ', false)).toEqual(['a', 'b', '-', 'c', 'd', 'Q']);
		expect(gatesOf(/npm_|_authToken|x-oauth/)).toEqual(['_', '-']);
		expect(gatesOf(/\dQ~/)).toEqual(['~']);
		expect(gatesOf(/A3T|AKIA/)).toEqual(['T', 'K']);
		// A lowercase letter only where an alternative has nothing rarer, and never in a caseless cue:
		// an alternative of letters there has no gate, and the cue is always tested.
		expect(gatesOf(/ccount|CCOUNT|ecret_?[Aa]/)).toEqual(['u', 'U', 'c']);
		expect(gatesOf(/:\/\/hooks\.slack\.com/i)).toEqual([':']);
		expect(gatesOf(/xox|hooks\.slack\.com/i)).toBeUndefined();
	});

	it('find a cue whatever its gates, and none whose gate the text lacks', () => {
		const cues = new Cues([/gh[pousr]_/, /AccountKey=|AZURE_STORAGE_/, /secret|account/i, /:\/\/[^\s/@]*@/]);
		expect(cues.in('a ghp_ token')).toBe(0b0001);
		expect(cues.in('AZURE_STORAGE_KEY and ghs_')).toBe(0b0011);
		expect(cues.in('AccountKey=x')).toBe(0b0110);
		expect(cues.in('see https://example.com/a@b and mail me@example.com')).toBe(0);
		expect(cues.in('https://ci:pass@example.com')).toBe(0b1000);
		expect(cues.in('gh-p_ ghpx AZURE-STORAGE')).toBe(0);
	});

	it('find a cue at an anchor past the first few, at the start of the text, and past anchors that are not its', () => {
		const cues = new Cues([/sig=/, /;\s*(?:password|pwd)\s*=/i, /A(?:3T|KIA|GPA)/, /AccountKey=|AZURE_STORAGE_/]);
		expect(cues.in(`${'a=1&'.repeat(20)}sig=abc`)).toBe(0b0001);
		expect(cues.in(`${'x; '.repeat(20)}Server=db; Password=hunter22`)).toBe(0b0010);
		expect(cues.in('AKIA at the start, AGPA later')).toBe(0b0100);
		expect(cues.in('Anna Alba ABBA AA A3T')).toBe(0b0100);
		expect(cues.in('AccountKey=abc')).toBe(0b1000);
		expect(cues.in('x AZURE_STORAGE_KEY')).toBe(0b1000);
		expect(cues.in('sig = a; password : x; A3 T; AccountKey =')).toBe(0);
	});

	it('find a cue by the literal it starts with from its gate on, past many gates that start none, and one whose gate comes after its literal start', () => {
		const cues = new Cues([/ya29\./, /\dQ~/]);
		expect(cues.in(`${'2026-12-07 20:29 '.repeat(20)}token ya29.a0Af`)).toBe(0b01);
		expect(cues.in('ya29.')).toBe(0b01);
		expect(cues.in('ya2 9. a29. ya29 Ya29.')).toBe(0);
		expect(cues.in(`${'~'.repeat(5)} abc8Q~def`)).toBe(0b10);
		expect(cues.in('Q~ at the start, aQ~ after a letter')).toBe(0);
	});

	it('find two cues anchored on one key in one walk, and a cue at a key past what follows another cue\'s key', () => {
		const cues = new Cues([/sig=/, /AccountKey=|AZURE_STORAGE_/, /A(?:3T|KIA|GPA)/, /;\s*(?:password|pwd)\s*=/i]);
		expect(cues.in('x=1 sig=abc AccountKey=def')).toBe(0b0011);
		expect(cues.in('AccountKey=def then sig=abc')).toBe(0b0011);
		// What follows the key is checked first: `AD`, `Ab` start no AWS id, `AKIA` does.
		expect(cues.in('README Abc AKIA')).toBe(0b0100);
		// Past whitespace, in either case of a caseless cue; a space past ASCII is left to the expression.
		expect(cues.in('a; b;\tPassword=x')).toBe(0b1000);
		expect(cues.in('a;\u00a0pwd = x')).toBe(0b1000);
		expect(cues.in('a; see; x = 1')).toBe(0);
	});

	it('find a cue keyed on a common character at its key, or past 4,096 characters by its expression', () => {
		const cues = new Cues([/:\/\/hooks\.slack\.com/i, /ccount|CCOUNT/]);
		const paddings = [' plain words'.repeat(10), ' plain words: count, https://example.com'.repeat(120)];
		for (const [text, bits] of [
			['https://HOOKS.Slack.com/services/T0', 0b01],
			['see https://example.com and http://hooks.slack.com', 0b01],
			['https://example.com, hooks.slack.com without a scheme', 0],
			['an account, an ACCOUNT', 0b10],
			['Count ACCount acCOUNT', 0],
		] as const) {
			expect(cues.in(text), text).toBe(bits);
			for (const padding of paddings) expect(cues.in(text + padding), `${text} and ${padding.length} more`).toBe(bits);
		}
	});

	it('find the same cues in a short text, whose gates are read in one pass, as in a long one', () => {
		const cues = new Cues([/gh[pousr]_/, /sig=/, /A(?:3T|KIA|GPA)/, /hooks\.slack\.com/i, /\dQ~/]);
		const padding = ' plain words'.repeat(10);
		for (const [text, bits] of [
			['a ghp_ token', 0b00001],
			['&sig=x', 0b00010],
			['AKIA', 0b00100],
			['HOOKS.Slack.com', 0b01000],
			['abc8Q~', 0b10000],
			['g h p _ s i g A K I A 8 Q ~', 0],
		] as const) {
			expect(cues.in(text), text).toBe(bits);
			expect(cues.in(text + padding), `${text} and more`).toBe(bits);
		}
	});

	it('find the AWS secret key and account id under every case of their names secretlint accepts', () => {
		const key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8aW3vX4N';
		for (const secret of ['SECRET', 'secret', 'Secret']) {
			for (const access of ['ACCESS', 'access', 'Access']) {
				const text = `AWS_${secret}_${access}_KEY = ${key}`;
				expect(scan({ content: [{ type: 'text', text }] }).findings.map((finding) => finding.rule), text).toContain('aws-secret-access-key');
			}
		}
		for (const account of ['ACCOUNT', 'account', 'Account']) {
			const text = `${account}_ID: 4829-1736-5042`;
			expect(scan({ content: [{ type: 'text', text }] }).findings.map((finding) => finding.rule), text).toContain('aws-account-id');
		}
	});

	it.each([
		['a token split inside its cue, across two content items', { content: [{ type: 'text', text: 'g' }, { type: 'text', text: `hp_${'Zq3xR8mV2nK7pL4sT9wY1bC6dF5gH0jA2eUi'}` }] }, 'github-token'],
		['an AWS key id split after its first letters', { content: [{ type: 'text', text: 'use AK' }, { type: 'text', text: 'IAZ7QX4MB2R9TK3WPL now' }] }, 'aws-access-key-id'],
		['a cue made by a key and its value (`AccountKey` `=` …)', { settings: { AccountKey: `${'k'.repeat(86)}==` } }, 'azure-storage-key'],
		['a password in a URL split across two strings, its cue too', { content: [{ type: 'text', text: 'clone postgres://app:s3cr3t' }, { type: 'text', text: 'Passw0rd@db.internal:5432/app' }] }, 'connection-string-password'],
		['a cue only in a base64 run', { content: [{ type: 'text', text: `header ${Buffer.from(`token=ghp_${'Zq3xR8mV2nK7pL4sT9wY1bC6dF5gH0jA2eUi'}`).toString('base64')}` }] }, 'github-token'],
		['a cue only percent-encoded', { content: [{ type: 'text', text: `next=${encodeURIComponent(`https://ci:${'Zq3xR8mV2nK7'}@ci.example.com/x`)}` }] }, 'basic-auth'],
	])('find %s', (_label, message, rule) => {
		expect(scan(message).findings.map((finding) => finding.rule)).toContain(rule);
	});
});

describe('the rule names', () => {
	it('name every message of the secretlint rules in use, so that no finding goes unnamed', () => {
		const names = SecretRules.presetNames();
		expect(names.length).toBeGreaterThan(10);
		for (const [id, rule] of names) expect(rule !== undefined && Object.hasOwn(SECRET_RULES, rule), `${id} → ${rule}`).toBe(true);
	});
});

describe('the texts of a message', () => {
	it('are every string and key in document order, each with its path, depth and own key or index', () => {
		const { slots } = collectTexts({ content: [{ type: 'text', text: 'one' }, 'two'], top: 'three' }, MAX);
		expect(slots.map(({ key, text, path, depth, last }) => ({ key, text, path, depth, last }))).toEqual([
			{ key: true, text: 'content', path: ['content'], depth: 1, last: 'content' },
			{ key: true, text: 'type', path: ['content', 0, 'type'], depth: 3, last: 'type' },
			{ key: false, text: 'text', path: ['content', 0, 'type'], depth: 3, last: 'type' },
			{ key: true, text: 'text', path: ['content', 0, 'text'], depth: 3, last: 'text' },
			{ key: false, text: 'one', path: ['content', 0, 'text'], depth: 3, last: 'text' },
			{ key: false, text: 'two', path: ['content', 1], depth: 2, last: 1 },
			{ key: true, text: 'top', path: ['top'], depth: 1, last: 'top' },
			{ key: false, text: 'three', path: ['top'], depth: 1, last: 'top' },
		]);
		expect(collectTexts('alone', MAX).slots.map(({ path, depth, last }) => ({ path, depth, last }))).toEqual([{ path: [], depth: 0, last: undefined }]);
	});

	it('rewrite a key and a value deep in the message, and a string that is the whole message', () => {
		const message = { outer: [{ 'ghp-key': 'value' }] };
		const { slots } = collectTexts(message, MAX);
		const key = slots.find((slot) => slot.key && slot.text === 'ghp-key')!;
		const value = slots.find((slot) => !slot.key && slot.text === 'value')!;
		expect(rewriteTexts(message, [[key, '[K]'], [value, '[V]']])).toEqual({ outer: [{ '[K]': '[V]' }] });
		expect(message).toEqual({ outer: [{ 'ghp-key': 'value' }] });
		const [whole] = collectTexts('secret', MAX).slots;
		expect(rewriteTexts('secret', [[whole!, '[S]']])).toBe('[S]');
	});
});

describe('the cap', () => {
	it('collects texts up to the cap and says it left the rest out', () => {
		const big = { content: [{ type: 'text', text: 'a'.repeat(2000) }, { type: 'text', text: `ghp_${'b'.repeat(36)}` }] };
		const collected = collectTexts(big, 2048);
		expect(collected.truncated).toBe(true);
		expect(scanner.scan(collected.slots)).toEqual([]);
		expect(scanner.scan(collectTexts(big, MAX).slots).map((finding) => finding.rule)).toEqual(['github-token']);
	});

	it('scans a string the cap cuts up to the cap, and a redaction keeps its unscanned rest', () => {
		const token = `ghp_${'c'.repeat(36)}`;
		const long = { text: `${token} ${'d'.repeat(5000)}` };
		const collected = collectTexts(long, 2048);
		expect(collected.truncated).toBe(true);
		expect(collected.slots.map((slot) => slot.text.length)).toEqual([4, 2044]);
		const [finding] = scanner.scan(collected.slots);
		expect(finding!.rule).toBe('github-token');
		const rewritten = rewriteTexts(long, [[collected.slots[1]!, `[REDACTED:github-token]${collected.slots[1]!.text.slice(token.length)}`]]) as { text: string };
		expect(rewritten.text).toBe(`[REDACTED:github-token] ${'d'.repeat(5000)}`);
	});
});
