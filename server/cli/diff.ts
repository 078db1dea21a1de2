/**
 * A line diff (longest common subsequence) of two texts, for `hangar tools diff`: definitions
 * are a few dozen lines, so the quadratic table costs nothing.
 */

export interface DiffLine {
	readonly kind: ' ' | '-' | '+';
	readonly text: string;
}

export function diffLines(before: string, after: string): DiffLine[] {
	const a = before.split('\n');
	const b = after.split('\n');
	// common[i][j]: the longest common subsequence of a[i…] and b[j…].
	const common = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
	for (let i = a.length - 1; i >= 0; i--) {
		for (let j = b.length - 1; j >= 0; j--) common[i]![j] = a[i] === b[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
	}
	const lines: DiffLine[] = [];
	let [i, j] = [0, 0];
	while (i < a.length || j < b.length) {
		if (i < a.length && j < b.length && a[i] === b[j]) {
			lines.push({ kind: ' ', text: a[i++]! });
			j++;
		} else if (j < b.length && (i === a.length || common[i]![j + 1]! >= common[i + 1]![j]!)) lines.push({ kind: '+', text: b[j++]! });
		else lines.push({ kind: '-', text: a[i++]! });
	}
	return lines;
}
