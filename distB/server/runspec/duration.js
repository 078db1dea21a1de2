/**
 * Go duration strings (`90s`, `5m`, `1h30m`, `250ms`), as ToolHive's run configurations write
 * them: a rate limit's refill period, a sign-in's timeout.
 */
const UNITS = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/;
/** Milliseconds of a Go duration string, or undefined when it is not one. */
export function parseDuration(text) {
    if (!DURATION.test(text))
        return undefined;
    let total = 0;
    for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
        total += Number(amount) * UNITS[unit];
    return total;
}
//# sourceMappingURL=duration.js.map