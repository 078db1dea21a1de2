/**
 * ToolHive's webhooks as the workloads service checks them and the proxy calls them: the
 * defaults, and the one outbound-address rule they go under (https to a public address, or
 * http to a loopback host for a local service; never a private or link-local address).
 */
import { isAbsolute } from 'node:path';
import type { WebhookConfig } from '../../protocol/runConfig.js';
import { checkProviderUrl, ProviderError, type ProviderAccess } from '../net/providerUrl.js';

export const DEFAULT_WEBHOOK_TIMEOUT_S = 10;
const MAX_WEBHOOK_TIMEOUT_S = 30;

/** Where a webhook may be: no setting opens plain http off loopback or a private address. */
export const WEBHOOK_ACCESS: ProviderAccess = { settings: { allowPrivateIP: 'nothing: a webhook is https on a public address, or on a loopback host' } };

/** What is wrong with the webhooks of a request (both lists, names unique across them), or undefined. */
export function webhooksProblem(lists: Readonly<Record<'mutating_webhooks' | 'validating_webhooks', readonly WebhookConfig[] | undefined>>): { field: string; message: string } | undefined {
	const names = new Set<string>();
	for (const [list, webhooks] of Object.entries(lists)) {
		for (const [index, webhook] of (webhooks ?? []).entries()) {
			const field = `${list}[${index}]`;
			if (!webhook.name) return { field: `${field}.name`, message: 'a webhook needs a name' };
			if (names.has(webhook.name)) return { field: `${field}.name`, message: `another webhook is named ${JSON.stringify(webhook.name)}` };
			names.add(webhook.name);
			if (!webhook.url) return { field: `${field}.url`, message: 'a webhook needs a url' };
			try {
				checkProviderUrl(webhook.url, WEBHOOK_ACCESS);
			} catch (error) {
				if (error instanceof ProviderError) return { field: `${field}.url`, message: error.message };
				throw error;
			}
			if (webhook.timeout !== undefined && (webhook.timeout < 1 || webhook.timeout > MAX_WEBHOOK_TIMEOUT_S)) return { field: `${field}.timeout`, message: `must be 1 to ${MAX_WEBHOOK_TIMEOUT_S} seconds` };
			for (const [key, path] of Object.entries(webhook.tls_config ?? {})) {
				if (typeof path === 'string' && !isAbsolute(path)) return { field: `${field}.tls_config.${key}`, message: 'must be an absolute path' };
			}
			const { client_cert_path: cert, client_key_path: key } = webhook.tls_config ?? {};
			if (!cert !== !key) return { field: `${field}.tls_config.${cert ? 'client_key_path' : 'client_cert_path'}`, message: 'a client certificate needs both client_cert_path and client_key_path (mTLS)' };
		}
	}
	return undefined;
}
