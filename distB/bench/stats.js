/** Small statistics and table printing for the benchmark suites. */
export function percentile(samples, p) {
    if (samples.length === 0)
        return Number.NaN;
    const sorted = [...samples].sort((a, b) => a - b);
    const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
    return sorted[rank];
}
export const median = (samples) => percentile(samples, 50);
/** The time of each of `count` calls of `work`, one after the other, in ms. */
export async function timed(count, work) {
    const samples = [];
    for (let index = 0; index < count; index++) {
        const started = performance.now();
        await work(index);
        samples.push(performance.now() - started);
    }
    return samples;
}
export function formatTable(table) {
    const widths = table.columns.map((column, index) => Math.max(column.length, ...table.rows.map((row) => row[index].length)));
    const line = (cells) => `| ${cells.map((cell, index) => cell.padEnd(widths[index])).join(' | ')} |`;
    return [
        `### ${table.title}`,
        '',
        line(table.columns),
        `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
        ...table.rows.map(line),
        '',
        ...table.verdicts.map((verdict) => `- ${verdict}`),
        '',
    ].join('\n');
}
export const ms = (value) => `${value.toFixed(value < 1 ? 3 : 1)} ms`;
export const perSecond = (value) => `${Math.round(value).toLocaleString('en-US')}/s`;
/** "met" or "MISSED", with the measured ratio; `context` (a bound, say) follows the target. */
export function verdict(label, ratio, limit, higherIsBetter = false, context) {
    const met = higherIsBetter ? ratio >= limit : ratio <= limit;
    const target = Number(limit.toFixed(2));
    return `${label}: ${ratio.toFixed(2)}× (target ${higherIsBetter ? '≥' : '≤'} ${target}×${context ? `; ${context}` : ''}) — ${met ? 'met' : 'MISSED'}`;
}
//# sourceMappingURL=stats.js.map