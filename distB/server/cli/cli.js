/**
 * What every command shares: in-process calls through the same dispatcher the daemon and
 * the REST server use, Ctrl-C as cancellation, and output as tables or `--json`.
 */
import { HangarError } from '../../protocol/errors.js';
import { contextFor } from '../context.js';
import { createEnvironment } from '../environment.js';
export class Cli {
    dispatcher;
    environmentValue;
    get environment() {
        return (this.environmentValue ??= createEnvironment('cli'));
    }
    async services() {
        if (!this.dispatcher) {
            const { createDispatcher } = await import('../services.js');
            this.dispatcher = createDispatcher(this.environment);
        }
        return this.dispatcher;
    }
    /** Calls one operation in-process; Ctrl-C cancels it. */
    async call(operation, params) {
        const dispatcher = await this.services();
        const controller = new AbortController();
        const onInterrupt = () => controller.abort();
        process.once('SIGINT', onInterrupt);
        try {
            return (await dispatcher.call(operation.method, params, contextFor(controller.signal, stderrProgress)));
        }
        finally {
            process.off('SIGINT', onInterrupt);
        }
    }
}
/**
 * Progress on stderr, so stdout stays clean for `--json`: on a terminal one line per stage,
 * updated in place as its percentage moves; otherwise one line per stage.
 */
export function streamProgress(stream = process.stderr) {
    /** The stage of the last line written; on a terminal that line is still open. */
    let stage;
    let open = false;
    const closeLine = () => {
        if (open)
            stream.write('\n');
        open = false;
        stage = undefined;
    };
    return {
        begin: (title, message) => {
            closeLine();
            stream.write(`${title}${message ? `: ${message}` : ''}\n`);
        },
        report: (message, percentage) => {
            if (!message && percentage === undefined)
                return;
            const text = `  ${message ?? ''}${percentage !== undefined ? ` (${percentage}%)` : ''}`;
            const next = message ?? stage ?? '';
            if (stream.isTTY) {
                if (open && next === stage)
                    stream.write(`\r\x1b[K${text}`);
                else {
                    if (open)
                        stream.write('\n');
                    stream.write(text);
                }
                open = true;
            }
            else if (next !== stage) {
                stream.write(`${text}\n`);
            }
            stage = next;
        },
        end: (message) => {
            closeLine();
            if (message)
                stream.write(`${message}\n`);
        },
    };
}
const stderrProgress = streamProgress();
/** Commander's accumulator for a repeatable option. */
export const collect = (value, previous = []) => [...previous, value];
export function printJson(value) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
/** A plain aligned table: a header row, then one row per item. */
export function printTable(items, columns, empty) {
    if (items.length === 0) {
        process.stdout.write(`${empty}\n`);
        return;
    }
    const headers = Object.keys(columns);
    const rows = items.map((item) => headers.map((header) => cell(columns[header](item))));
    const widths = headers.map((header, index) => Math.max(header.length, ...rows.map((row) => row[index].length)));
    const line = (cells) => cells
        .map((value, index) => (index === cells.length - 1 ? value : value.padEnd(widths[index])))
        .join('  ')
        .trimEnd();
    process.stdout.write(`${[line(headers.map((header) => header.toUpperCase())), ...rows.map(line)].join('\n')}\n`);
}
function cell(value) {
    if (value === undefined || value === null)
        return '-';
    if (Array.isArray(value))
        return value.length ? value.join(',') : '-';
    return String(value);
}
/** The one-line message and exit code of a failed command. */
export function describeFailure(error) {
    if (error instanceof HangarError)
        return { message: error.message, exitCode: error.status === 400 ? 2 : 1 };
    return { message: error?.message ?? String(error), exitCode: 1 };
}
//# sourceMappingURL=cli.js.map