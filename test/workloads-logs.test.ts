/**
 * The log of a workload's several server instances: each instance's timestamped output merged
 * in time (`server/workloads/logs.ts`). The engine's own output is test/workloads-backend-replicas.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { linesAfter } from '../server/cli/commands/workloads.js';
import { mergedLogs } from '../server/workloads/logs.js';

describe('mergedLogs', () => {
	it('interleaves the instances\' lines by time, each after its container\'s name, without the timestamps', () => {
		const merged = mergedLogs(
			[
				{ container: 'web', text: '2026-11-27T12:00:00.1Z starting\n2026-11-27T12:00:03Z request 1\n' },
				{ container: 'web-2', text: '2026-11-27T12:00:00.12Z starting\n2026-11-27T12:00:02.999999999Z listening\n' },
			],
			100,
		);
		// .1 s comes before .12 s although ".1Z" sorts after ".12" as text.
		expect(merged).toBe('web   | starting\nweb-2 | starting\nweb-2 | listening\nweb   | request 1\n');
	});

	it('keeps the last lines, and the order of lines stamped alike', () => {
		const same = '2026-11-27T12:00:00.5Z';
		const merged = mergedLogs(
			[
				{ container: 'a', text: `${same} first\n${same} second\n2026-11-27T12:00:01Z third\n` },
				{ container: 'b', text: `${same} fourth\n` },
			],
			3,
		);
		expect(merged).toBe('a | second\nb | fourth\na | third\n');
	});

	it('keeps an empty line of output as one', () => {
		expect(mergedLogs([{ container: 'a', text: '2026-11-27T12:00:00Z \n2026-11-27T12:00:01Z x\n' }], 10)).toBe('a | \na | x\n');
	});
});

describe('linesAfter (hangar logs -f)', () => {
	it('prints a line repeated after a restart: a stdio server\'s stderr is short and says the same at each start', () => {
		const start = 'Starting default (STDIO) server...\n';
		expect(linesAfter([start], [start, start])).toEqual([start]);
	});

	it('prints a log that was cut or rotated whole', () => {
		expect(linesAfter(['a\n'], ['x\n', 'y\n'])).toEqual(['x\n', 'y\n']);
	});
});
