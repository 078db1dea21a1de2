/**
 * Workload commands: Run MCP Server… (from the registry, asking for its environment variables
 * and secrets), Stop / Restart / Remove Workload, Sign In to Workload's Server and Show Workload Logs.
 */
import * as vscode from 'vscode';
import { browsableUrl } from '../../../protocol/browserUrl.js';
import { WorkloadName } from '../../../protocol/common.js';
import { ListCatalogServers, type ServerInput, type ServerRecord } from '../../../protocol/protocol.catalog.js';
import { CreateSecret, ListSecretKeys } from '../../../protocol/protocol.secrets.js';
import {
	CreateWorkload,
	DeleteWorkload,
	GetWorkloadLogs,
	ListWorkloads,
	RestartWorkload,
	SignInWorkload,
	StopWorkload,
} from '../../../protocol/protocol.workloads.js';
import type { Hangar } from '../hangar.js';
import { readSettings, type Settings } from '../settings.js';
import { showFailure } from '../ui/errors.js';
import { withDaemonProgress } from '../ui/progress.js';
import { searchPick } from '../ui/search.js';
import { REGISTRY, serverDescription, serverLabel } from '../views/registry.js';
import type { WorkloadItem } from '../views/workloads.js';

/** A workload name from a server name: its last segment, cut to the characters names allow. */
export function suggestWorkloadName(serverName: string): string {
	const last = serverName.split('/').pop() ?? serverName;
	return last.replace(/[^a-zA-Z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 100) || 'mcp-server';
}

/** The environment variables a server asks for, as its first package declares them. */
export function serverEnvironment(server: ServerRecord): ServerInput[] {
	return (server.packages?.[0]?.environmentVariables ?? []).filter((input) => input.name);
}

function pickServer(hangar: Hangar): Promise<ServerRecord | undefined> {
	return searchPick<ServerRecord>({
		title: 'Run MCP Server',
		placeholder: 'Search the registry for an MCP server',
		searchAction: 'search the registry',
		search: async (query, signal) => {
			const { servers } = await hangar.daemon.request(
				ListCatalogServers,
				{ registryName: REGISTRY, limit: 50, ...(query.trim() ? { q: query.trim() } : {}) },
				{ signal },
			);
			return servers.map((server) => ({
				label: serverLabel(server),
				description: serverDescription(server),
				detail: server.description,
				value: server,
			}));
		},
	});
}

interface Environment {
	env_vars: Record<string, string>;
	secrets: Array<{ name: string; target: string }>;
}

/** Asks for each variable: plain ones in an input box, secret ones as a stored secret. */
async function askEnvironment(hangar: Hangar, workload: string, inputs: readonly ServerInput[]): Promise<Environment | undefined> {
	const environment: Environment = { env_vars: {}, secrets: [] };
	for (const input of inputs) {
		const name = input.name!;
		if (input.isSecret) {
			const key = await askSecret(hangar, workload, input);
			if (key === undefined) return undefined;
			if (key) environment.secrets.push({ name: key, target: name });
			continue;
		}
		const value = await vscode.window.showInputBox({
			title: `${name}${input.isRequired ? '' : ' (optional)'}`,
			prompt: input.description,
			value: input.default ?? '',
			placeHolder: input.placeholder,
			ignoreFocusOut: true,
			validateInput: (text) => (input.isRequired && !text ? `${name} is required` : undefined),
		});
		if (value === undefined) return undefined;
		if (value) environment.env_vars[name] = value;
	}
	return environment;
}

/** The key of a secret for `input`: an existing one, or a new one stored now. `''` skips an optional one. */
async function askSecret(hangar: Hangar, workload: string, input: ServerInput): Promise<string | undefined> {
	const name = input.name!;
	let keys: string[] = [];
	try {
		keys = (await hangar.daemon.request(ListSecretKeys, {})).keys.map((entry) => entry.key);
	} catch {
		// Not listable (or no provider yet): a new secret is still possible; storing it tells why not.
	}
	const NEW = '$(add) New secret…';
	const SKIP = '$(circle-slash) Leave unset';
	const picked = await vscode.window.showQuickPick([NEW, ...keys, ...(input.isRequired ? [] : [SKIP])], {
		title: `${name} is secret: which stored secret supplies it?`,
		placeHolder: input.description,
		ignoreFocusOut: true,
	});
	if (picked === undefined) return undefined;
	if (picked === SKIP) return '';
	if (picked !== NEW) return picked;
	const key = `${workload}-${name}`.toLowerCase();
	const value = await vscode.window.showInputBox({
		title: `Value of ${name} (stored as secret ${key})`,
		prompt: input.description,
		password: true,
		ignoreFocusOut: true,
		validateInput: (text) => (text ? undefined : 'a value is required'),
	});
	if (value === undefined) return undefined;
	await hangar.daemon.request(CreateSecret, { key, value });
	return key;
}

export async function runServer(hangar: Hangar, from?: ServerRecord): Promise<void> {
	const server = from ?? (await pickServer(hangar));
	if (!server) return;
	const name = await vscode.window.showInputBox({
		title: `Run ${server.name}`,
		prompt: 'Workload name',
		value: suggestWorkloadName(server.name),
		validateInput: (text) => {
			const parsed = WorkloadName.safeParse(text);
			return parsed.success ? undefined : parsed.error.issues[0]?.message;
		},
	});
	if (!name) return;
	try {
		const environment = await askEnvironment(hangar, name, serverEnvironment(server));
		if (!environment) return;
		const result = await withDaemonProgress(`Starting MCP server ${name}`, (options) =>
			hangar.daemon.request(
				CreateWorkload,
				{
					name,
					registry: REGISTRY,
					server: server.name,
					...(Object.keys(environment.env_vars).length ? { env_vars: environment.env_vars } : {}),
					...(environment.secrets.length ? { secrets: environment.secrets } : {}),
					...guardrailsOf(readSettings()),
				},
				options,
			),
		);
		void vscode.window.showInformationMessage(`MCP server ${result.name} is running on port ${result.port}.`);
	} catch (error) {
		await showFailure(error, `run MCP server ${server.name}`);
	} finally {
		hangar.workloads.refresh();
	}
}

async function pickWorkload(hangar: Hangar, title: string, running?: boolean): Promise<string | undefined> {
	try {
		const { workloads } = await hangar.daemon.request(ListWorkloads, { all: !running });
		if (workloads.length === 0) {
			void vscode.window.showInformationMessage(running ? 'No MCP server is running.' : 'There are no workloads.');
			return undefined;
		}
		const picked = await vscode.window.showQuickPick(
			workloads.map((workload) => ({ label: workload.name, description: [workload.status, workload.url].filter(Boolean).join(' · ') })),
			{ title, placeHolder: 'Workload' },
		);
		return picked?.label;
	} catch (error) {
		await showFailure(error, 'list workloads');
		return undefined;
	}
}

export async function stopWorkload(hangar: Hangar, item?: WorkloadItem): Promise<void> {
	const name = item?.name ?? (await pickWorkload(hangar, 'Stop Workload', true));
	if (name) await requestFor(hangar, name, StopWorkload, 'Stopping', 'stop');
}

export async function restartWorkload(hangar: Hangar, item?: WorkloadItem): Promise<void> {
	const name = item?.name ?? (await pickWorkload(hangar, 'Restart Workload'));
	if (name) await requestFor(hangar, name, RestartWorkload, 'Restarting', 'restart');
}

/** How long the editor waits for a sign-in the user is completing in the browser. */
const SIGN_IN_WAIT_S = 300;

/** A sign-in page to open: https, or http to loopback; any other URL is refused, never opened. */
function browsable(raw: string): vscode.Uri {
	const url = browsableUrl(raw);
	if (!url) throw new Error(`the sign-in page ${JSON.stringify(raw.slice(0, 200))} is neither https nor http to this machine; not opened`);
	return vscode.Uri.parse(url.href, true);
}

/**
 * Sign In to Workload's Server: the proxy of a remote workload prepares an OAuth sign-in; the
 * editor opens its URL in the browser (the browser's redirect reaches the proxy's loopback
 * callback), or shows the device code, then waits for the sign-in to complete.
 */
export async function signInWorkload(hangar: Hangar, item?: WorkloadItem, named?: string): Promise<void> {
	const name = item?.name ?? named ?? (await pickWorkload(hangar, "Sign In to Workload's Server", true));
	if (!name) return;
	try {
		const started = await hangar.daemon.request(SignInWorkload, { name });
		if (started.status === 'signed_in') {
			void vscode.window.showInformationMessage(`Workload ${name} is signed in to its server.`);
			return;
		}
		if (started.status === 'failed') throw new Error(started.message ?? 'the sign-in could not start');
		if (started.authorization_url) await vscode.env.openExternal(browsable(started.authorization_url));
		else if (started.user_code && started.verification_uri) {
			const open = await vscode.window.showInformationMessage(`Sign in ${name}: enter the code ${started.user_code} at ${started.verification_uri}`, 'Open');
			if (open) await vscode.env.openExternal(browsable(started.verification_uri));
		}
		const result = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: `Signing in ${name} (complete it in your browser)…`, cancellable: true },
			(_progress, token) => {
				const controller = new AbortController();
				token.onCancellationRequested(() => controller.abort());
				return hangar.daemon.request(SignInWorkload, { name, wait: SIGN_IN_WAIT_S }, { signal: controller.signal });
			},
		);
		if (result.status === 'signed_in') void vscode.window.showInformationMessage(`Workload ${name} is signed in to its server.`);
		else void vscode.window.showWarningMessage(`Workload ${name} is not signed in: ${result.message ?? 'the sign-in did not complete'}`);
	} catch (error) {
		await showFailure(error, `sign in workload ${name}`);
	} finally {
		hangar.workloads.refresh();
	}
}

export async function removeWorkload(hangar: Hangar, item?: WorkloadItem): Promise<void> {
	const name = item?.name ?? (await pickWorkload(hangar, 'Remove Workload'));
	if (!name) return;
	const confirmed = await vscode.window.showWarningMessage(
		`Remove workload ${name}?`,
		{ modal: true, detail: 'Its container and proxy are stopped and its configuration is deleted.' },
		'Remove',
	);
	if (confirmed === 'Remove') await requestFor(hangar, name, DeleteWorkload, 'Removing', 'remove');
}

/** Asks the daemon to stop, restart or remove `name`, says so in the status bar, and refreshes the view. */
async function requestFor(hangar: Hangar, name: string, operation: typeof StopWorkload | typeof RestartWorkload | typeof DeleteWorkload, doing: string, verb: string): Promise<void> {
	try {
		await hangar.daemon.request(operation, { name });
		vscode.window.setStatusBarMessage(`${doing} ${name}…`, 3_000);
	} catch (error) {
		await showFailure(error, `${verb} workload ${name}`);
	} finally {
		hangar.workloads.refresh();
	}
}

export async function showWorkloadLogs(hangar: Hangar, item?: WorkloadItem): Promise<void> {
	const name = item?.name ?? (await pickWorkload(hangar, 'Show Workload Logs'));
	if (!name) return;
	try {
		const logs = await hangar.daemon.request(GetWorkloadLogs, { name });
		await hangar.documents.show(`/workloads/${name}.log`, logs, 'log');
	} catch (error) {
		await showFailure(error, `read the logs of ${name}`);
	}
}

/** The guardrails the settings turn on for a new server, when any. */
function guardrailsOf(settings: Settings): { guardrails?: Record<string, object> } {
	const guardrails = { ...(settings.guardrails && { secrets: {} }), ...(settings.guardrailsPersonalData && { personal_data: {} }) };
	return Object.keys(guardrails).length ? { guardrails } : {};
}
