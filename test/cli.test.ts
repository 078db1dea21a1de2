/**
 * The `hangar` command as users type it: help on every command, tables and `--json`, and a
 * one-line error with a non-zero exit code on failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { HangarError } from '../protocol/errors.js';
import { Cli, describeFailure, streamProgress } from '../server/cli/cli.js';
import { buildProgram } from '../server/cli/program.js';
import { createTestHome, type TestHome } from './support/home.js';
import { startRemoteServer, type RemoteServer } from './fixtures/workloads/helpers.js';
import { HANGAR_BIN, runHangar } from './support/processes.js';
import { writeSkill } from './support/skills.js';

let home: TestHome;
beforeAll(async () => (home = await createTestHome()));
afterAll(() => home.dispose());

const hangar = (...args: string[]) => runHangar(args, home.env);

/** Command paths listed under "Commands:" in a help text. */
function subcommandsOf(help: string): string[] {
	const section = help.split(/^Commands:$/m)[1] ?? '';
	return [...section.matchAll(/^ {2}([a-z-]+)/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
}

/** The full command tree, every area loaded, help at a fixed width. */
async function fullProgram(): Promise<Command> {
	const program = await buildProgram(new Cli(), [], true);
	program.configureHelp({ ...program.configureHelp(), helpWidth: 80 });
	return program;
}

describe('help', () => {
	// In-process: walking ~80 commands by spawning each one depends on the machine's speed.
	it('every command and subcommand has a description and help', async () => {
		const seen: string[] = [];
		const walk = (command: Command, path: string[]) => {
			seen.push(path.join(' '));
			expect(command.description(), `hangar ${path.join(' ')}`).not.toBe('');
			expect(command.helpInformation()).toMatch(/^Usage: hangar/);
			for (const sub of command.commands) walk(sub, [...path, sub.name()]);
		};
		walk(await fullProgram(), []);
		expect(seen).toEqual(expect.arrayContaining(['', 'daemon', 'serve', 'version', 'completion', 'group', 'group ls', 'group create', 'group rm']));
	});

	it('hangar --help lists every command without loading the areas, as the full tree does', async () => {
		const spawned = await hangar('--help');
		expect(spawned.code).toBe(0);
		expect(spawned.stdout).toBe((await fullProgram()).helpInformation());
	});

	it('an area command answers --help from its own module', { timeout: 120_000 }, async () => {
		const result = await hangar('registry', 'servers', '--help');
		expect(result.code).toBe(0);
		expect(result.stdout).toMatch(/^Usage: hangar registry servers/);
		expect(subcommandsOf((await hangar('group', '--help')).stdout)).toEqual(['ls', 'create', 'info', 'rm']);
	});

	it('an unknown command fails with a hint', async () => {
		const result = await hangar('frobnicate');
		expect(result.code).toBe(2);
		expect(result.stderr).toMatch(/unknown command/);
	});
});

describe('usage errors exit with 2, commander\'s own included', () => {
	it.each([
		[['frobnicate']],
		[['group', 'create']],
		[['group', 'ls', '--no-such-flag']],
		[['serve', '--port', 'eighty']],
		[['completion', 'tcsh']],
		[['group', 'create', 'a', 'b']],
	])('hangar %j', async (args) => {
		const result = await hangar(...args);
		expect(result.code).toBe(2);
		expect(result.stderr).not.toBe('');
	});

	it.each([
		[['serve', '--port', '70000'], '--port <port>', '70000', 'a port number'],
		[['run', 'hangar-test/everything:1', '--proxy-port', 'abc'], '--proxy-port <port>', 'abc', 'a port number'],
		[['run', 'hangar-test/everything:1', '--remote-auth-callback-port', '1e3'], '--remote-auth-callback-port <port>', '1e3', 'a port number'],
		[['run', 'hangar-test/everything:1', '--request-timeout', '-3'], '--request-timeout <seconds>', '-3', 'a whole number'],
		[['registry', 'servers', '--page', 'two'], '--page <n>', 'two', 'an integer'],
		[['top', '--once', '--window', '1e1'], '-w, --window <seconds>', '1e1', 'a whole number from 1 to 60'],
		[['top', '--once', '--window', '0'], '-w, --window <seconds>', '0', 'a whole number from 1 to 60'],
		[['top', '--interval', '0x10'], '-i, --interval <seconds>', '0x10', 'a number of seconds above 0 and at most 3600'],
		[['top', '--interval', '0'], '-i, --interval <seconds>', '0', 'a number of seconds above 0 and at most 3600'],
	])('hangar %j names the option and the value it refuses', async (args, option, value, expected) => {
		const result = await hangar(...args);
		expect(result.code).toBe(2);
		expect(result.stderr).toContain(`option '${option}' argument '${value}' is invalid. expected ${expected}`);
	});

	it('hangar run --help lists the common options first, then each area under its heading', async () => {
		const run = (await fullProgram()).commands.find((command) => command.name() === 'run')!;
		const help = run.helpInformation();
		const headings = [...help.matchAll(/^(\S.*):$/gm)].map((match) => match[1]);
		expect(headings.slice(0, 2)).toEqual(['Arguments', 'Options']);
		expect(headings).toEqual(expect.arrayContaining(['Proxy', 'Remote servers', 'Client authentication (OIDC)', 'Package builds (npx://, uvx://, go://)', 'Telemetry']));
		const common = help.split(/^Options:$/m)[1]!.split(/^\S/m)[0]!;
		for (const flag of ['--name', '--transport', '--group', '--env', '--secret', '--volume']) expect(common).toContain(flag);
		expect(common).not.toContain('--remote-auth');
		expect(help.split(/^Remote servers:$/m)[1]).toContain('--remote-auth-issuer');
	});

	it('help and version exit with 0', { timeout: 120_000 }, async () => {
		expect((await hangar('--help')).code).toBe(0);
		expect((await hangar('--version')).code).toBe(0);
		expect((await hangar('group', '--help')).code).toBe(0);
	});
});

describe('closed pipes', () => {
	it('a reader that went away ends the command quietly (hangar … | head -1)', { timeout: 120_000 }, async () => {
		for (const args of [['completion', 'bash'], ['registry', 'servers', '--json'], ['--help']]) {
			const child = spawn(process.execPath, [HANGAR_BIN, ...args], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
			child.stdout!.destroy(); // the reader is gone before the first write
			let stderr = '';
			child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
			const code = await new Promise((resolve) => child.once('close', resolve));
			expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: '' });
		}
	});
});

describe('completion', () => {
	/** A HANGAR_HOME and HOME holding a group, a registered client, a secret, a skill and a workload. */
	let world: { env: NodeJS.ProcessEnv; bin: string; remote: RemoteServer };
	beforeAll(async () => {
		// A home of its own: the other tests here expect no client registered.
		const env = { ...home.env, HANGAR_HOME: join(home.path, 'completion', 'hangar'), HOME: join(home.path, 'completion', 'home') };
		await mkdir(env.HOME, { recursive: true });
		// The scripts call the command they complete (`hangar`): here, this build of it.
		const bin = join(home.path, 'completion', 'hangar-bin');
		await writeFile(bin, `#!/bin/sh\nexec '${process.execPath}' '${HANGAR_BIN}' "$@"\n`, { mode: 0o755 });
		const remote = await startRemoteServer('streamable');
		world = { env, bin, remote };
		const run = (args: string[], input?: string) => runHangar(args, env, input);
		const skill = await writeSkill(join(home.path, 'completion', 'skills'), 'completing');
		for (const [args, input] of [
			[['group', 'create', 'completion-dev']],
			[['client', 'register', 'cursor', '--group', 'completion-dev']],
			[['secret', 'setup']],
			[['secret', 'set', 'completion-token'], 'value'],
			[['skill', 'build', skill]],
			[['skill', 'install', 'completing', '-c', 'cursor']],
			[['run', remote.url, '--name', 'completion-wl', '--group', 'completion-dev']],
		] as [string[], string?][]) {
			const result = await run(args, input);
			expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
		}
	}, 120_000);
	afterAll(async () => {
		if (world) await runHangar(['rm', 'completion-wl'], world.env);
		world?.remote.stop();
	});

	const candidates = async (...words: string[]) => (await runHangar(['__complete', ...words], world.env)).stdout.split('\n').filter(Boolean);

	it('__complete answers the stored names each position takes, read from the store without a daemon', { timeout: 120_000 }, async () => {
		expect(await candidates('logs', '')).toEqual(['completion-wl']);
		expect(await candidates('mcp', 'call', 'comp')).toEqual(['completion-wl']);
		expect(await candidates('stop', 'completion-wl', '')).toEqual(['completion-wl']);
		expect(await candidates('mcp', 'call', 'completion-wl', '')).toEqual([]);
		expect(await candidates('group', 'info', '')).toEqual(['completion-dev', 'default']);
		expect(await candidates('ls', '--group', 'comp')).toEqual(['completion-dev']);
		expect(await candidates('client', 'unregister', '')).toEqual(['cursor']);
		expect(await candidates('client', 'register', 'cla')).toEqual(['claude-code']);
		expect(await candidates('skill', 'install', 'x', '-c', 'curs')).toEqual(['cursor']);
		expect(await candidates('skill', 'info', '')).toEqual(['completing']);
		expect(await candidates('secret', 'rm', '')).toEqual(['completion-token']);
		expect(await candidates('registry', 'info', '')).toEqual(['default']);
		expect(await candidates('completion', '')).toEqual(['bash', 'fish', 'powershell', 'zsh']);
		expect(await candidates('group', 'create', '')).toEqual([]);
		expect(await candidates('logs', '--')).toEqual([]);
	});

	it('prints a bash script that completes commands, subcommands, options and stored names', { timeout: 120_000 }, async () => {
		const script = await runHangar(['completion', 'bash'], world.env);
		expect(script.code).toBe(0);
		const path = join(home.path, 'completion', 'hangar.bash');
		await writeFile(path, script.stdout);
		expect(spawnSync('bash', ['-n', path]).status).toBe(0);
		const complete = async (line: string) => {
			const words = line.split(' ');
			words[0] = world.bin;
			const run = spawn('bash', ['-c', `source '${path}'\nCOMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hangar; printf '%s\\n' "\${COMPREPLY[@]}"`], { env: world.env });
			let out = '';
			run.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
			await new Promise((resolve) => run.once('close', resolve));
			return out.trim().split('\n');
		};
		expect(await complete('hangar gr')).toEqual(['group']);
		expect(await complete('hangar group c')).toEqual(['create']);
		expect(await complete('hangar registry servers --j')).toEqual(['--json']);
		expect(await complete('hangar group info ')).toEqual(['--json', '--help', 'completion-dev', 'default']);
		expect(await complete('hangar logs comp')).toEqual(['completion-wl']);
		expect(await complete('hangar ls --group comp')).toEqual(['completion-dev']);
		expect(await complete('hangar client rm cu')).toEqual(['cursor']);
	});

	it('zsh runs the bash script through bashcompinit; fish gets a script of its own', { timeout: 120_000 }, async () => {
		const zsh = (await runHangar(['completion', 'zsh'], world.env)).stdout;
		expect(zsh).toMatch(/^autoload -U \+X bashcompinit && bashcompinit\n/);
		// zsh ties \`path\` to PATH: a function variable of that name would hide \`hangar\` from the call for names.
		expect(zsh).not.toMatch(/\blocal [^\n]*\bpath=/);
		const fish = await runHangar(['completion', 'fish'], world.env);
		expect(fish.code).toBe(0);
		// Where the shells are installed, their own syntax check runs (neither is on the test machine).
		for (const [shell, script] of [['zsh', zsh], ['fish', fish.stdout]] as const) {
			if (spawnSync(shell, ['--version']).status !== 0) continue;
			const file = join(home.path, 'completion', `hangar.${shell}`);
			await writeFile(file, script);
			expect(spawnSync(shell, ['-n', file]).status, `${shell} -n`).toBe(0);
		}
		// Without fish the script's shape is checked: every block closes.
		const opened = fish.stdout.match(/^\s*(function|switch|for|if)\b/gm)!.length;
		expect(fish.stdout.match(/^\s*end$/gm)!.length).toBe(opened);
		expect(fish.stdout).toContain("complete -c hangar -f -a '(__hangar_complete)'");
		expect(fish.stdout).toContain("case 'group'\n\t\t\techo 'ls list create info rm delete --help'");
		expect(fish.stdout).toMatch(/case .*'group info'.*'logs'.*\n.*\$hangar __complete \$tokens "\$cur"/);
		expect(fish.stdout).toMatch(/contains -- "\$tokens\[-1\]" .*'--group'.*'-c'/);
	});

	it('PowerShell gets a native argument completer from the same tree, which asks __complete as bash does', { timeout: 120_000 }, async () => {
		const script = await runHangar(['completion', 'powershell'], world.env);
		expect(script.code).toBe(0);
		const text = script.stdout;
		// pwsh is neither a Debian nor an npm package (the npm `pwsh` downloads it): the script's shape is checked.
		expect(text).toMatch(/^# hangar completion \(generated by `hangar completion powershell`\)\nRegister-ArgumentCompleter -Native -CommandName hangar -ScriptBlock \{\n/);
		for (const [open, close] of [['{', '}'], ['(', ')']] as const) expect(text.split(open).length, `${open}${close}`).toBe(text.split(close).length);
		expect(text.replaceAll("''", '').split("'").length % 2).toBe(1); // every string literal closes
		expect(text).toContain("\t\t'group' = @('ls', 'list', 'create', 'info', 'rm', 'delete', '--help')\n");
		expect(text).toMatch(/\$valueFlags = @\(.*'--group'.*'-c'.*\)/);
		expect(text).toMatch(/\$namePaths = @\(.*'group info'.*'logs'.*\)/);
		// The same rows as bash's table: one per command path.
		const bash = (await runHangar(['completion', 'bash'], world.env)).stdout;
		expect(text.match(/^\t\t'[^']*' = @\(/gm)!.length).toBe(bash.match(/^\t\t'[^']*'\) echo/gm)!.length);
		// It calls `hangar __complete WORDS… CURRENT`, the current word possibly empty: answered so.
		expect(text).toContain('& $hangar __complete @typed $current 2>$null');
		expect(await candidates('logs', '')).toEqual(['completion-wl']);
		expect(await candidates('ls', '--group', '')).toEqual(['completion-dev', 'default']);
		expect((await runHangar(['completion', '--help'], world.env)).stdout).toContain('hangar completion powershell | Out-String | Invoke-Expression');
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
		const printed = (await hangar('version')).stdout;
		expect(printed).toMatch(/^hangar v\d+\.\d+\.\d+\nengine: docker \S+ at unix:\/\/\/var\/run\/docker\.sock \(the default Docker socket\)\n$/);
		// --version, -v and `hangar version` say it alike, whether or not the command tree is built.
		const line = `${printed.split('\n')[0]}\n`;
		for (const args of [['--version'], ['-v'], ['--version', 'group']]) expect((await hangar(...args)).stdout).toBe(line);
		expect(JSON.parse((await hangar('version', '--json')).stdout)).toEqual({
			version: expect.stringMatching(/^v/),
			runtime: { name: 'docker', version: expect.any(String), address: 'unix:///var/run/docker.sock', found_by: 'the default Docker socket' },
		});
	});
});

describe('errors say what was wrong and what to do next', () => {
	it('an unknown client names the closest id and lists the supported ones', async () => {
		const result = await hangar('client', 'register', 'VSCode');
		expect(result.code).toBe(2);
		expect(result.stderr).toMatch(/^hangar: invalid name: unsupported client type: VSCode; did you mean 'vscode'\? \(supported: roo-code, cline, .*claude-code.*\)\n$/);
	});

	it('a field is named once: invalid transport, not invalid transport: invalid transport', async () => {
		const result = await hangar('run', 'hangar-test/everything:1', '--transport', 'bogus');
		expect(result.code).toBe(2);
		expect(result.stderr).toMatch(/^hangar: invalid transport: .*bogus.*\(valid transports: stdio, sse, streamable-http\)\n$/);
		expect(result.stderr.match(/invalid transport/g)).toHaveLength(1);
	});

	it('unregistering a client that is not registered says so', async () => {
		const result = await hangar('client', 'unregister', 'cursor');
		expect(result).toMatchObject({ code: 1, stdout: '' });
		expect(result.stderr).toBe("hangar: client 'cursor' is not registered; see hangar client ls\n");
	});

	it('a usage error is one line in the same format as every other error', async () => {
		const result = await hangar('run', '--bogus');
		expect(result).toMatchObject({ code: 2, stderr: "hangar: unknown option '--bogus' (run with --help for usage)\n" });
		expect((await hangar('skill', 'validate', join(home.path, 'nope'))).stderr).toMatch(/^hangar: [^\n]*does not exist\n$/);
	});

	it('a missing group, a taken name, a missing workload: the command that helps comes with the error', async () => {
		expect(await hangar('run', 'hangar-test/everything:1', '--name', 'nogroup', '--group', 'nosuchgroup', '--transport', 'stdio')).toMatchObject({
			code: 1,
			stderr: "hangar: group 'nosuchgroup' not found; create it with hangar group create nosuchgroup\n",
		});
		expect(await hangar('info', 'nosuch')).toMatchObject({ code: 1, stderr: 'hangar: workload nosuch not found (hangar ls --all lists them)\n' });
		expect(describeFailure(new HangarError(409, 'workload with name memory already exists', 'workload_exists')).message).toBe(
			'workload with name memory already exists; give this one another name with --name',
		);
	});

	it('unregister takes several clients, as register does, and changes nothing when one is not registered', async () => {
		const env = { ...home.env, HOME: join(home.path, 'user') };
		const client = (...args: string[]) => runHangar(['client', ...args], env);
		expect(await client('register', 'vscode', 'claude-code')).toMatchObject({ code: 0 });
		expect(await client('unregister', 'vscode', 'cursor')).toMatchObject({ code: 1, stderr: "hangar: client 'cursor' is not registered; see hangar client ls\n" });
		expect(await client('unregister', 'vscode', 'claude-code')).toMatchObject({ code: 0, stdout: 'Unregistered vscode, claude-code.\n' });
		const listed = JSON.parse((await client('ls', '--json')).stdout) as Array<{ name: string; groups?: string[] }>;
		expect(listed.filter((entry) => entry.groups?.length)).toEqual([]);
	});
});

describe('progress on stderr', () => {
	const run = (isTTY: boolean) => {
		let written = '';
		const progress = streamProgress({ isTTY, write: (chunk: string) => ((written += chunk), true) } as unknown as NodeJS.WriteStream);
		progress.begin('Installing', 'skill');
		progress.report('git: Counting objects', 50);
		progress.report('git: Receiving objects', 10);
		// git interleaves the server's stages with its own: a late update of a stage already passed.
		progress.report('git: Counting objects', 100);
		progress.report('git: Receiving objects', 100);
		progress.end('Installed');
		return written;
	};

	it('shows each stage once, a line each when piped, updated in place on a terminal', () => {
		expect(run(false)).toBe('Installing: skill\n  git: Counting objects (50%)\n  git: Receiving objects (10%)\nInstalled\n');
		expect(run(true)).toBe('Installing: skill\n  git: Counting objects (50%)\n  git: Receiving objects (10%)\r\x1b[K  git: Receiving objects (100%)\nInstalled\n');
	});
});
