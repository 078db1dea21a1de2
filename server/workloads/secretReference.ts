/** ToolHive's stored form of a secret reference in a run configuration. */
import type { SecretParameter } from '../../protocol/runConfig.js';

/** `name,target=ENV`, ToolHive's stored form of a secret reference. */
export function encodeSecret(secret: SecretParameter): string {
	return `${secret.name},target=${secret.target}`;
}

export function decodeSecret(stored: string): SecretParameter {
	const comma = stored.lastIndexOf(',target=');
	return comma < 0 ? { name: stored, target: stored } : { name: stored.slice(0, comma), target: stored.slice(comma + ',target='.length) };
}
