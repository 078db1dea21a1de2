/**
 * The URLs Hangar hands to a browser (a sign-in's authorization or verification page): https,
 * or plain http to this machine's loopback. Anything else (`file:`, `javascript:`, a custom
 * scheme an opener would pass to another program, http to another host) is never opened.
 */
export function browsableUrl(raw: string): URL | undefined {
	let url: URL;
	try {
		url = new URL(raw);
	} catch {
		return undefined;
	}
	if (url.username || url.password) return undefined;
	if (url.protocol === 'https:') return url;
	const host = url.hostname.replace(/^\[|\]$/g, '');
	const loopback = host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
	return url.protocol === 'http:' && loopback ? url : undefined;
}
