/**
 * `hangar signin NAME`: signs a remote workload's proxy in to its OAuth-protected server. The
 * proxy prepares the sign-in (`workloads/signIn`); this opens the authorization URL in the
 * browser (or prints it, with `--skip-browser`), or prints the device code (`--device`), then
 * waits for the sign-in to complete. Progress goes to stderr; the outcome to stdout.
 * `hangar run URL --remote-auth` ends with the same flow.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { browsableUrl } from '../../../protocol/browserUrl.js';
import { HangarError } from '../../../protocol/errors.js';
import { type WorkloadSignInResult } from '../../../protocol/protocol.workloads.js';
import { parseDuration } from '../../runspec/duration.js';
import { collect, printJson, type Cli } from '../cli.js';
import { port } from '../values.js';

export const DEFAULT_SIGNIN_TIMEOUT_S = 300;

export interface SignInOptions {
	skipBrowser?: boolean;
	device?: boolean;
	timeout?: string;
	json?: boolean;
}

/** A Go duration (`90s`, `5m`, `1h30m`) or plain seconds, in seconds. */
export function durationSeconds(value: string): number {
	if (/^\d+$/.test(value)) return Number(value);
	const ms = parseDuration(value);
	if (ms === undefined) throw new HangarError(400, `invalid duration ${JSON.stringify(value)}: expected for example 90s, 5m or 1h`);
	return Math.ceil(ms / 1000);
}

/**
 * The system opener of `platform` for `url`: the URL is always one argument of its own, and no
 * shell reads it (Windows' `start` is a `cmd` built-in, so `rundll32`'s URL handler instead).
 */
export function openerOf(url: URL, platform: NodeJS.Platform = process.platform): [command: string, args: string[]] {
	if (platform === 'darwin') return ['open', [url.href]];
	if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url.href]];
	return ['xdg-open', [url.href]];
}

/** Opens `raw` in the user's browser when it is https (or http to loopback); false when it was not opened. */
async function openBrowser(raw: string): Promise<boolean> {
	const url = browsableUrl(raw);
	if (!url) return false;
	const [command, args] = openerOf(url);
	// Loaded here: every workload command loads this module, few open a browser.
	const { spawn } = await import('node:child_process');
	return new Promise((resolve) => {
		const child = spawn(command, args, { stdio: 'ignore', detached: true, shell: false, windowsHide: true });
		child.once('error', () => resolve(false));
		child.once('spawn', () => {
			child.unref();
			resolve(true);
		});
	});
}

export async function signInFlow(cli: Cli, name: string, options: SignInOptions): Promise<WorkloadSignInResult> {
	const timeout = options.timeout ? durationSeconds(options.timeout) : DEFAULT_SIGNIN_TIMEOUT_S;
	const started = await cli.call('workloads/signIn', { name, device: options.device });
	if (started.status === 'pending') {
		if (started.user_code) {
			process.stderr.write(`To sign in workload ${name}, open ${started.verification_uri} and enter the code ${started.user_code}\n`);
		} else if (started.authorization_url) {
			// The workload's own `skip_browser` (--remote-auth-skip-browser) holds unless the flag says otherwise.
			const skip = options.skipBrowser ?? (await cli.call('workloads/get', { name }).then((detail) => detail.oauth_config?.skip_browser, () => undefined));
			const opened = !skip && (await openBrowser(started.authorization_url));
			process.stderr.write(`${opened ? 'Opening your browser to sign in' : 'Open this URL to sign in'} workload ${name}:\n  ${started.authorization_url}\n`);
		}
		process.stderr.write(`Waiting up to ${timeout} s for the sign-in…\n`);
	}
	const result = started.status === 'pending' ? await cli.call('workloads/signIn', { name, device: options.device, wait: timeout }) : started;
	if (options.json) printJson(result);
	else if (result.status === 'signed_in') process.stdout.write(`Workload ${name} is signed in to its server\n`);
	if (result.status !== 'signed_in') {
		process.exitCode = 1;
		if (!options.json) process.stderr.write(result.status === 'pending' ? `The sign-in did not complete within ${timeout} s; run hangar signin ${name} again\n` : `The sign-in failed: ${result.message ?? 'no reason given'}\n`);
	}
	return result;
}

export function signin(program: Command, cli: Cli): Command {
	return program
		.command('signin')
		.description("Sign a remote workload in to its OAuth-protected server (opens the browser, or prints the URL)")
		.argument('<name>', 'the workload')
		.option('--skip-browser', 'print the URL instead of opening the browser')
		.option('--device', 'device authorization: a code to enter on any device (headless machines)')
		.option('--timeout <duration>', `how long to wait for the sign-in (default ${DEFAULT_SIGNIN_TIMEOUT_S / 60}m)`)
		.option('--json', 'print JSON')
		.action(async (name: string, options: SignInOptions) => {
			await signInFlow(cli, name, options);
		});
}

/** The `--remote-auth*` flags of `hangar run URL` (ToolHive's names). */
export interface RemoteAuthOptions {
	remoteAuth?: boolean;
	remoteAuthIssuer?: string;
	remoteAuthClientId?: string;
	remoteAuthClientSecret?: string;
	remoteAuthClientSecretFile?: string;
	remoteAuthScopes: string[];
	remoteAuthAuthorizeUrl?: string;
	remoteAuthTokenUrl?: string;
	remoteAuthCallbackPort?: number;
	remoteAuthSkipBrowser?: boolean;
	remoteAuthTimeout?: string;
	remoteAuthResource?: string;
	remoteAuthBearerToken?: string;
	remoteAuthBearerTokenFile?: string;
}

export function addRemoteAuthOptions(command: Command): Command {
	return command
		.option('--remote-auth', 'the remote server needs an OAuth sign-in: sign in right after it is created')
		.option('--remote-auth-issuer <url>', 'the authorization server (default: from the server\'s protected-resource metadata)')
		.option('--remote-auth-client-id <id>', 'a client registered at the authorization server (default: dynamic registration)')
		.option('--remote-auth-client-secret <secret-name>', 'the name of a Hangar secret holding the client secret (never the value itself)')
		.option('--remote-auth-client-secret-file <file>', 'a file holding the client secret, read by the proxy')
		.option('--remote-auth-scopes <scope>', 'scopes to ask for (repeatable or comma-separated; default: from the server\'s challenge)', collect, [])
		.option('--remote-auth-authorize-url <url>', 'authorization endpoint, when the server publishes no metadata')
		.option('--remote-auth-token-url <url>', 'token endpoint, when the server publishes no metadata')
		.option('--remote-auth-callback-port <port>', 'port of the loopback sign-in callback (default: a free port)', port)
		.option('--remote-auth-skip-browser', 'print the sign-in URL instead of opening the browser')
		.option('--remote-auth-timeout <duration>', `how long to wait for the sign-in (default ${DEFAULT_SIGNIN_TIMEOUT_S / 60}m)`)
		.option('--remote-auth-resource <uri>', 'the RFC 8707 resource to ask a token for (default: the server URL)')
		.option('--remote-auth-bearer-token <secret-name>', 'a static bearer token: the name of a Hangar secret holding it')
		.option('--remote-auth-bearer-token-file <file>', 'a static bearer token read from a file by the service');
}

/** `oauth_config` from the flags, or undefined when none is given. */
export function remoteAuthOf(options: RemoteAuthOptions): Record<string, unknown> | undefined {
	const resolvePath = (path: string | undefined) => (path ? resolve(path) : undefined);
	const config = {
		issuer: options.remoteAuthIssuer,
		client_id: options.remoteAuthClientId,
		client_secret: options.remoteAuthClientSecret ? { name: options.remoteAuthClientSecret, target: 'client_secret' } : undefined,
		client_secret_file: resolvePath(options.remoteAuthClientSecretFile),
		scopes: options.remoteAuthScopes.length ? options.remoteAuthScopes.flatMap((value) => value.split(/[,\s]+/)).filter(Boolean) : undefined,
		authorize_url: options.remoteAuthAuthorizeUrl,
		token_url: options.remoteAuthTokenUrl,
		callback_port: options.remoteAuthCallbackPort,
		skip_browser: options.remoteAuthSkipBrowser,
		timeout: options.remoteAuthTimeout,
		resource: options.remoteAuthResource,
		bearer_token: options.remoteAuthBearerToken ? { name: options.remoteAuthBearerToken, target: 'bearer_token' } : undefined,
		bearer_token_file: resolvePath(options.remoteAuthBearerTokenFile),
	};
	const given = Object.values(config).some((value) => value !== undefined);
	if (!given && !options.remoteAuth) return undefined;
	const oauth = !config.bearer_token && !config.bearer_token_file;
	return JSON.parse(JSON.stringify({ ...config, use_pkce: oauth ? true : undefined }));
}
