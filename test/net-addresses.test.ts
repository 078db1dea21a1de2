/**
 * The one outbound-address policy: the classes of the special-purpose ranges, the address
 * forms that hide them (IPv4-mapped, NAT64, 6to4, brackets), and what each reach allows.
 */
import { describe, expect, it } from 'vitest';
import { addressClass, isLoopbackHost, isPrivateAddress, refusalOf } from '../server/net/addresses.js';

describe('address classes', () => {
	it.each([
		['8.8.8.8', 'public'],
		['2606:4700::1111', 'public'],
		['127.0.0.1', 'loopback'],
		['127.255.0.9', 'loopback'],
		['::1', 'loopback'],
		['[::1]', 'loopback'],
		['::ffff:127.0.0.1', 'loopback'],
		['10.1.2.3', 'private'],
		['172.31.255.255', 'private'],
		['192.168.0.1', 'private'],
		['100.64.0.1', 'private'],
		['fd00::5', 'private'],
		['169.254.169.254', 'link-local'],
		['::ffff:169.254.169.254', 'link-local'],
		['fe80::1', 'link-local'],
		['metadata.google.internal', 'link-local'],
		['0.0.0.0', 'unspecified'],
		['::', 'unspecified'],
		['192.0.0.8', 'reserved'],
		['198.18.0.1', 'reserved'],
		['203.0.113.7', 'reserved'],
		['64:ff9b::7f00:1', 'reserved'],
		['2002:7f00:1::', 'reserved'],
		['255.255.255.255', 'reserved'],
		['224.0.0.1', 'multicast'],
		['ff02::1', 'multicast'],
	])('%s is %s', (address, kind) => {
		expect(addressClass(address)).toBe(kind);
		expect(isPrivateAddress(address)).toBe(kind !== 'public');
	});

	it('loopback names', () => {
		expect(isLoopbackHost('localhost')).toBe(true);
		expect(isLoopbackHost('api.localhost')).toBe(true);
		expect(isLoopbackHost('127.0.0.2')).toBe(true);
		expect(isLoopbackHost('localhost.example.com')).toBe(false);
	});
});

describe('reach', () => {
	it('link-local and unspecified addresses are out of every reach', () => {
		for (const address of ['169.254.169.254', 'fe80::1', '0.0.0.0']) {
			expect(refusalOf(address, { private: true, loopback: true })).toBeDefined();
		}
	});

	it('private needs private; loopback needs loopback or private; public always passes', () => {
		expect(refusalOf('10.0.0.1', {})).toBe('private');
		expect(refusalOf('10.0.0.1', { loopback: true })).toBe('private');
		expect(refusalOf('10.0.0.1', { private: true })).toBeUndefined();
		expect(refusalOf('127.0.0.1', {})).toBe('loopback');
		expect(refusalOf('127.0.0.1', { loopback: true })).toBeUndefined();
		expect(refusalOf('1.1.1.1', {})).toBeUndefined();
	});
});
