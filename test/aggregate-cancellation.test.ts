/** The cancellation of a script or composite tool (server/proxy/backends/aggregate/cancellation.ts): an AbortController's behaviour, as its users read it. */
import { describe, expect, it } from 'vitest';
import { Cancellation } from '../server/proxy/backends/aggregate/cancellation.js';

describe('Cancellation', () => {
	it('calls each listener once, in order; a removed one and one added after are not called', () => {
		const cancellation = new Cancellation();
		const heard: string[] = [];
		const removed = () => heard.push('removed');
		cancellation.addEventListener('abort', () => heard.push('first'));
		cancellation.addEventListener('abort', removed);
		cancellation.addEventListener('abort', () => heard.push('second'));
		cancellation.removeEventListener('abort', removed);
		expect(cancellation.aborted).toBe(false);
		cancellation.abort();
		cancellation.abort();
		cancellation.addEventListener('abort', () => heard.push('late'));
		expect(cancellation.aborted).toBe(true);
		expect(heard).toEqual(['first', 'second']);
	});

});
