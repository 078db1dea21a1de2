/**
 * Calls one webhook: the body signed as ToolHive signs it when the webhook names a secret
 * (`X-ToolHive-Timestamp: <unix seconds>` and `X-ToolHive-Signature: sha256=<hex HMAC-SHA256 of
 * "<timestamp>.<body>">`, pkg/webhook/signing.go), sent under the outbound-address
 * policy (net/providerFetch.ts: https, or http to loopback; no redirect followed; at most 1 MiB
 * back, within the webhook's timeout). Nothing of the caller's goes with it: no token, no header.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { WebhookConfig } from '../../../../protocol/runConfig.js';
import { requestProviderJson, type ProviderRequest } from '../../../net/providerFetch.js';
import { DEFAULT_WEBHOOK_TIMEOUT_S, WEBHOOK_ACCESS } from '../../../runspec/webhooks.js';

const SIGNATURE_HEADER = 'X-ToolHive-Signature';
const TIMESTAMP_HEADER = 'X-ToolHive-Timestamp';

export class WebhookClient {
	private constructor(
		readonly name: string,
		readonly failurePolicy: 'fail' | 'ignore',
		private readonly url: URL,
		private readonly timeoutMs: number,
		private readonly key: string | undefined,
		private readonly tls: ProviderRequest['tls'],
	) {}

	/** Reads the webhook's TLS files and resolves its signing secret: a failure stops the proxy's start. */
	static async create(config: WebhookConfig, resolveSecret: (name: string) => Promise<string>): Promise<WebhookClient> {
		const tls = config.tls_config;
		const read = (path: string | undefined) => (path ? readFile(path) : Promise.resolve(undefined));
		const [ca, cert, key] = await Promise.all([read(tls?.ca_bundle_path), read(tls?.client_cert_path), read(tls?.client_key_path)]);
		const secret = config.hmac_secret_ref ? await resolveSecret(config.hmac_secret_ref) : undefined;
		return new WebhookClient(
			config.name!,
			config.failure_policy ?? 'fail',
			new URL(config.url!),
			(config.timeout ?? DEFAULT_WEBHOOK_TIMEOUT_S) * 1000,
			secret,
			{ ca, cert, key, rejectUnauthorized: tls?.insecure_skip_verify !== true },
		);
	}

	/** POSTs `payload`; its JSON answer, or a ProviderError saying why there is none. */
	call(payload: unknown): Promise<unknown> {
		const body = JSON.stringify(payload);
		const headers: Record<string, string> = { 'Content-Type': 'application/json' };
		if (this.key) {
			// The timestamp is signed with the body, so that a webhook can refuse a replayed one.
			const timestamp = String(Math.floor(Date.now() / 1000));
			headers[TIMESTAMP_HEADER] = timestamp;
			headers[SIGNATURE_HEADER] = `sha256=${createHmac('sha256', this.key).update(`${timestamp}.${body}`).digest('hex')}`;
		}
		return requestProviderJson(this.url, { method: 'POST', headers, body, tls: this.tls }, WEBHOOK_ACCESS, this.timeoutMs);
	}
}
