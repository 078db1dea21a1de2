/**
 * The output of a workload's several server instances as one: `docker logs --timestamps` of
 * each, merged in time, each line after its container's name, as `docker compose logs` shows it.
 */

/**
 * A sortable form of the engine's RFC 3339 time (`…T12:00:00.1Z`): its fraction of a second
 * comes without trailing zeros, so it is padded to nanoseconds before strings are compared.
 */
function sortKey(time: string): string {
	const match = /^([^.Z]+)(?:\.(\d{1,9}))?Z$/.exec(time);
	return match ? `${match[1]}.${(match[2] ?? '').padEnd(9, '0')}` : time;
}

/** The last `limit` lines of `outputs`, oldest first, each as `container | line`. */
export function mergedLogs(outputs: ReadonlyArray<{ readonly container: string; readonly text: string }>, limit: number): string {
	const width = Math.max(...outputs.map(({ container }) => container.length));
	const lines: Array<{ readonly key: string; readonly line: string }> = [];
	for (const { container, text } of outputs) {
		for (const stamped of text.split('\n')) {
			if (!stamped) continue;
			const space = stamped.indexOf(' ');
			lines.push({ key: sortKey(stamped.slice(0, space)), line: `${container.padEnd(width)} | ${stamped.slice(space + 1)}\n` });
		}
	}
	// A stable sort: lines of one time keep their container's order.
	lines.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	return lines
		.slice(-limit)
		.map(({ line }) => line)
		.join('');
}
