/**
 * The system rows: health and version.
 */
import { Health, Version } from '../protocol/protocol.system.js';
import { implement, type Implementation } from './dispatch.js';
import { VERSION } from './version.js';

export function systemImplementations(): Implementation[] {
	return [
		implement(Health, () => ({ status: 'ok' as const })),
		implement(Version, () => ({ version: `v${VERSION}` })),
	];
}
