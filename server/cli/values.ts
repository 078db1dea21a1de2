/**
 * Parsers of option values, for commander's `argParser`. A bad value throws commander's
 * `InvalidArgumentError`, so that every command reports it alike: commander names the option
 * and the value (`option '--proxy-port <port>' argument 'abc' is invalid. expected …`), and the
 * CLI exits with 2, a usage error.
 */
import { InvalidArgumentError } from 'commander';

/** The number `value` spells in decimal digits (a sign allowed when `signed`), else undefined. */
function integerOf(value: string, signed: boolean): number | undefined {
	if (!(signed ? /^[+-]?\d+$/ : /^\+?\d+$/).test(value.trim())) return undefined;
	const number = Number(value);
	return Number.isSafeInteger(number) ? number : undefined;
}

/** A TCP port: 0 (a free one) to 65535. */
export function port(value: string): number {
	const number = integerOf(value, false);
	if (number === undefined || number > 65_535) throw new InvalidArgumentError('expected a port number from 0 to 65535.');
	return number;
}

/** A count or a number of seconds: 0 or more. */
export function wholeNumber(value: string): number {
	const number = integerOf(value, false);
	if (number === undefined) throw new InvalidArgumentError('expected a whole number, 0 or more.');
	return number;
}

/** An integer, whose range the operation checks. */
export function integer(value: string): number {
	const number = integerOf(value, true);
	if (number === undefined) throw new InvalidArgumentError('expected an integer.');
	return number;
}

/** A whole number from `min` to `max`. */
export function wholeNumberFrom(min: number, max: number): (value: string) => number {
	return (value) => {
		const number = integerOf(value, false);
		if (number === undefined || number < min || number > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
		return number;
	};
}

/** Seconds in decimal digits, fractions allowed (`0.5`): above 0 and at most `max`. */
export function secondsUpTo(max: number): (value: string) => number {
	return (value) => {
		const seconds = /^\+?(\d+(\.\d*)?|\.\d+)$/.test(value.trim()) ? Number(value) : Number.NaN;
		if (!(seconds > 0 && seconds <= max)) throw new InvalidArgumentError(`expected a number of seconds above 0 and at most ${max}.`);
		return seconds;
	};
}
