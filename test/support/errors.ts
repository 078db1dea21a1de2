/** What an operation that must fail rejected with: always a HangarError. */
import { expect } from 'vitest';
import { HangarError } from '../../protocol/errors.js';

export async function hangarErrorOf(promise: Promise<unknown>): Promise<HangarError> {
	const error = await promise.then(
		() => undefined,
		(caught: unknown) => caught,
	);
	expect(error).toBeInstanceOf(HangarError);
	return error as HangarError;
}
