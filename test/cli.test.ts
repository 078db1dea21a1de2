/**
 * The `hangar` command as users type it: help on every command, tables and `--json`, and a
 * one-line error with a non-zero exit code on failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

let home: TestHome;
beforeAll(async () => (home = await createTestHome()));
afterAll(() => home.dispose());

const hangar = (...args: string[]) => runHangar(args, home.env);

/** Command paths listed under "Commands:" in a help text. */
function subcommandsOf(help: string): string[] {
	const section = help.split(/^Commands:$/m)[1] ?? '';
	return [...section.matchAll(/^ {2}([a-z-]+)/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
}

describe('help', () => {
	it('every command and subcommand answers --help', async () => {
		const pending: string[][] = [[]];
		const seen: string[] = [];
		while (pending.length) {
			const path = pending.shift()!;
			const result = await hangar(...path, '--help');
			expect(result.code, `hangar ${path.join(' ')} --help`).toBe(0);
			expect(result.stdout).toMatch(/^Usage: hangar/);
			seen.push(path.join(' '));
			for (const name of subcommandsOf(result.stdout)) pending.push([...path, name]);
		}
		expect(seen).toEqual(expect.arrayContaining(['', 'daemon', 'serve', 'version', 'group', 'group ls', 'group create', 'group rm']));
	});

	it('an unknown command fails with a hint', async () => {
		const result = await hangar('frobnicate');
		expect(result.code).not.toBe(0);
		expect(result.stderr).toMatch(/unknown command/);
	});
});

describe('groups', () => {
	it('create, list as a table and as JSON, show, delete', async () => {
		expect(await hangar('group', 'create', 'cli-dev')).toMatchObject({ code: 0, stdout: 'Group cli-dev created.\n' });
		const table = await hangar('group', 'ls');
		expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+CLIENTS\s+SKILLS$/);
		expect(table.stdout).toMatch(/^cli-dev\s/m);
		const json = await hangar('group', 'ls', '--json');
		expect(JSON.parse(json.stdout)).toEqual(
			expect.arrayContaining([expect.objectContaining({ name: 'default' }), expect.objectContaining({ name: 'cli-dev' })]),
		);
		expect(JSON.parse((await hangar('group', 'info', 'cli-dev', '--json')).stdout)).toMatchObject({ name: 'cli-dev' });
		expect((await hangar('group', 'rm', 'cli-dev')).code).toBe(0);
		expect((await hangar('group', 'info', 'cli-dev')).code).toBe(1);
	});

	it('failures are one line on stderr and a non-zero exit', async () => {
		const invalid = await hangar('group', 'create', 'Not Valid');
		expect(invalid.code).toBe(2);
		expect(invalid.stderr).toMatch(/^hangar: invalid name: .+\n$/);
		const protectedGroup = await hangar('group', 'rm', 'default');
		expect(protectedGroup).toMatchObject({ code: 2, stderr: 'hangar: cannot delete the default group\n' });
		await hangar('group', 'create', 'twice');
		expect(await hangar('group', 'create', 'twice')).toMatchObject({ code: 1, stderr: "hangar: group 'twice' already exists\n" });
	});
});

describe('version', () => {
	it('prints the version, also as JSON', async () => {
		expect((await hangar('version')).stdout).toMatch(/^hangar v\d+\.\d+\.\d+\n$/);
		expect(JSON.parse((await hangar('version', '--json')).stdout)).toEqual({ version: expect.stringMatching(/^v/) });
	});
});
