/**
 * The secrets rows over both doors, a real daemon (stdio JSON-RPC) and a real `hangar serve`
 * (HTTP): the 400 → 404 → 405 → 409 order of checks before setup (on a state never set up) and
 * under every provider (each describe sets its provider up, each case makes the keys it needs),
 * and a value planted in every write that must never come back out, in any response, log line
 * or state file other than the encrypted store.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
	CreateSecret,
	DeleteSecret,
	GetSecretsProvider,
	ListSecretKeys,
	SetupSecrets,
	UpdateSecret,
} from '../protocol/protocol.secrets.js';
import type { OperationDefinition } from '../protocol/operation.js';
import {
	filesUnder,
	installFakeOp,
	restDoor,
	rpcDoor,
	secretsEnv,
	secretsService,
	storePaths,
	type Door,
} from './fixtures/secrets/support.js';
import { createTestHome, type TestHome } from './support/home.js';
import { spawnDaemon, startServe, type DaemonProcess, type ServeProcess } from './support/processes.js';

/** Written as a value by every create and update below, and served by both read-only providers. */
const PLANTED = `planted-${randomUUID()}`;
const ENV_SECRET = 'present';
const OP_REFERENCE = 'op://dev/github/token';

interface Step {
	readonly row: OperationDefinition;
	readonly params: Record<string, unknown>;
}

interface Case extends Step {
	readonly title: string;
	/** Calls made first, for the state the case needs. */
	readonly given?: readonly Step[];
	readonly status: number;
	readonly code?: string;
	/** Part of the message, for errors that must name something. */
	readonly message?: string;
	readonly body?: unknown;
}

const missingValue = (row: OperationDefinition, key = 'k'): Case => ({
	title: `${row.method} without a value is 400 before anything else`,
	row,
	params: { key },
	status: 400,
	message: 'value',
});

const beforeSetup: Case[] = [
	missingValue(CreateSecret),
	missingValue(UpdateSecret),
	{ title: 'a reserved key is 400', row: CreateSecret, params: { key: '__thv_x', value: PLANTED }, status: 400, message: '__thv_' },
	...[GetSecretsProvider, ListSecretKeys].map((row) => ({
		title: `${row.method} is 404 until setup`,
		row,
		params: {},
		status: 404,
		code: 'secrets_not_setup',
	})),
	...[CreateSecret, UpdateSecret].map((row) => ({
		title: `${row.method} is 404 until setup`,
		row,
		params: { key: 'k', value: PLANTED },
		status: 404,
		code: 'secrets_not_setup',
		message: 'secrets provider not configured',
	})),
	{ title: 'secrets/delete is 404 until setup', row: DeleteSecret, params: { key: 'k' }, status: 404, code: 'secrets_not_setup' },
	{
		title: 'setup with an unknown type is 400 naming the valid types',
		row: SetupSecrets,
		params: { provider_type: 'vault' },
		status: 400,
		message: 'invalid secrets provider type: vault (valid types: encrypted, 1password, environment)',
	},
	{ title: 'setup without a type is 400', row: SetupSecrets, params: {}, status: 400, message: 'provider type cannot be empty' },
	{
		title: 'a password for a read-only provider is 400',
		row: SetupSecrets,
		params: { provider_type: 'environment', password: PLANTED },
		status: 400,
		message: 'password',
	},
	{
		title: 'a given password with no keyring and no HANGAR_SECRETS_PASSWORD is 400',
		row: SetupSecrets,
		params: { provider_type: 'encrypted', password: PLANTED },
		status: 400,
		code: 'keyring_not_available',
	},
	{ title: 'a refused setup sets nothing up', row: GetSecretsProvider, params: {}, status: 404 },
];

function readOnly(type: 'environment' | '1password', existingKey: string): Case[] {
	return [
		{
			title: `setup ${type} is 201`,
			row: SetupSecrets,
			params: { provider_type: type },
			status: 201,
			body: { provider_type: type, message: expect.stringMatching(/^Secrets provider (setup|reconfigured) successfully$/) },
		},
		{
			title: 'the provider is read-only',
			row: GetSecretsProvider,
			params: {},
			status: 200,
			body: {
				name: 'default',
				provider_type: type,
				capabilities: { can_read: true, can_write: false, can_delete: false, can_list: false, can_cleanup: false },
			},
		},
		missingValue(CreateSecret, existingKey),
		{
			title: 'create of a key the provider has is 405, not 409',
			row: CreateSecret,
			params: { key: existingKey, value: PLANTED },
			status: 405,
			message: 'does not support creating secrets',
		},
		{ title: 'create is 405', row: CreateSecret, params: { key: 'k', value: PLANTED }, status: 405 },
		{ title: 'update is 405', row: UpdateSecret, params: { key: existingKey, value: PLANTED }, status: 405 },
		{ title: 'update of a missing key is 405 too', row: UpdateSecret, params: { key: 'k', value: PLANTED }, status: 405 },
		{ title: 'delete is 405', row: DeleteSecret, params: { key: existingKey }, status: 405, message: 'deleting' },
		{ title: 'list is 405', row: ListSecretKeys, params: {}, status: 405, message: 'listing keys' },
	];
}

/** A call a case makes first, to put the store in the state it tests; it must succeed. */
const create = (key: string, value = PLANTED): Step => ({ row: CreateSecret, params: { key, value } });
const reconfigure: Step = { row: SetupSecrets, params: { provider_type: 'encrypted' } };

/** Each case starts from an empty store (see `emptyStore`) and makes the keys it needs. */
const encrypted: Case[] = [
	{
		title: 'setup encrypted is 201',
		row: SetupSecrets,
		params: { provider_type: 'encrypted' },
		status: 201,
		body: { provider_type: 'encrypted', message: 'Secrets provider reconfigured successfully' },
	},
	{
		title: 'the provider can do everything',
		row: GetSecretsProvider,
		params: {},
		status: 200,
		body: {
			name: 'default',
			provider_type: 'encrypted',
			capabilities: { can_read: true, can_write: true, can_delete: true, can_list: true, can_cleanup: true },
		},
	},
	{ title: 'an empty store lists no keys', row: ListSecretKeys, params: {}, status: 200, body: { keys: [] } },
	missingValue(CreateSecret),
	{
		title: 'create is 201',
		row: CreateSecret,
		params: { key: 'github', value: PLANTED },
		status: 201,
		body: { key: 'github', message: 'Secret created successfully' },
	},
	{
		title: 'create of an existing key is 409',
		given: [create('github')],
		row: CreateSecret,
		params: { key: 'github', value: PLANTED },
		status: 409,
		code: 'secret_exists',
	},
	{
		title: 'update is 200',
		given: [create('github')],
		row: UpdateSecret,
		params: { key: 'github', value: `${PLANTED}-2` },
		status: 200,
		body: { key: 'github', message: 'Secret updated successfully' },
	},
	{
		title: 'update of a missing key is 404',
		row: UpdateSecret,
		params: { key: 'missing', value: PLANTED },
		status: 404,
		code: 'secret_not_found',
		message: 'secret "missing" not found',
	},
	{ title: 'a second key', given: [create('github')], row: CreateSecret, params: { key: 'api-key', value: PLANTED }, status: 201 },
	{
		title: 'keys are listed, sorted',
		given: [create('github'), create('api-key')],
		row: ListSecretKeys,
		params: {},
		status: 200,
		body: { keys: [{ key: 'api-key' }, { key: 'github' }] },
	},
	{ title: 'delete is 204', given: [create('api-key')], row: DeleteSecret, params: { key: 'api-key' }, status: 204 },
	{ title: 'delete of a missing key is 404', row: DeleteSecret, params: { key: 'api-key' }, status: 404, code: 'secret_not_found' },
	{
		title: 'reconfiguring keeps the secrets',
		given: [create('github')],
		row: SetupSecrets,
		params: { provider_type: 'encrypted' },
		status: 201,
		body: { provider_type: 'encrypted', message: 'Secrets provider reconfigured successfully' },
	},
	{
		title: 'the key is still there',
		given: [create('github'), reconfigure],
		row: ListSecretKeys,
		params: {},
		status: 200,
		body: { keys: [{ key: 'github' }] },
	},
	{
		title: 'create after reconfiguring still sees it',
		given: [create('github'), reconfigure],
		row: CreateSecret,
		params: { key: 'github', value: PLANTED },
		status: 409,
	},
];

let opPath: string;

async function arrange(door: Door, steps: readonly Step[]): Promise<void> {
	for (const step of steps) {
		const outcome = await door.call(step.row, step.params);
		expect(outcome.status, `given ${step.row.method}: ${JSON.stringify(outcome.body)}`).toBeLessThan(300);
	}
}

function runCases(door: () => Door, cases: readonly Case[]): void {
	for (const entry of cases) {
		it(entry.title, async () => {
			await arrange(door(), entry.given ?? []);
			const outcome = await door().call(entry.row, entry.params);
			expect(outcome.status, JSON.stringify(outcome.body)).toBe(entry.status);
			if (entry.code) expect(outcome.body).toMatchObject({ code: entry.code });
			if (entry.message) expect((outcome.body as { message: string }).message).toContain(entry.message);
			if (entry.body !== undefined) expect(outcome.body).toEqual(entry.body);
			if (entry.status === 204) expect(outcome.body ?? null).toBeNull();
		});
	}
}

/** Deletes every key, so each encrypted case starts from the same store whatever ran before. */
async function emptyStore(door: Door): Promise<void> {
	const listed = await door.call(ListSecretKeys, {});
	for (const { key } of (listed.body as { keys: { key: string }[] }).keys) await arrange(door, [{ row: DeleteSecret, params: { key } }]);
}

interface DoorUnderTest {
	readonly home: TestHome;
	readonly door: Door;
	/** Everything the process wrote to stderr. */
	readonly log: () => string;
	stop(): Promise<void>;
}

/** A daemon or `hangar serve` on a state of its own. */
async function startDoor(kind: 'rpc' | 'rest'): Promise<DoorUnderTest> {
	const home = await createTestHome('hangar-secrets-');
	const env = secretsEnv(home, { PATH: opPath, HANGAR_LOG: 'debug', [`HANGAR_SECRET_${ENV_SECRET}`]: PLANTED });
	const stopAndDispose = async (stop: () => Promise<void>) => {
		await stop();
		await home.dispose();
	};
	if (kind === 'rpc') {
		const daemon: DaemonProcess = spawnDaemon(env);
		await daemon.client.initialize('secrets-test');
		return { home, door: rpcDoor(daemon), log: () => daemon.stderr(), stop: () => stopAndDispose(() => daemon.stop()) };
	}
	const serve: ServeProcess = await startServe(env);
	let log = '';
	serve.child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
	return { home, door: restDoor(serve.url), log: () => log, stop: () => stopAndDispose(() => serve.stop()) };
}

/** Starts a door on first use and stops it after the enclosing describe. */
function lazyDoor(kind: 'rpc' | 'rest'): () => Promise<DoorUnderTest> {
	let started: Promise<DoorUnderTest> | undefined;
	afterAll(async () => (await started)?.stop());
	return () => (started ??= startDoor(kind));
}

/** For the enclosing describe: `open`'s door, with `provider` set up first unless none is given. */
function useDoor(open: () => Promise<DoorUnderTest>, provider?: string): () => DoorUnderTest {
	let current: DoorUnderTest | undefined;
	beforeAll(async () => {
		current = await open();
		if (provider) await arrange(current.door, [{ row: SetupSecrets, params: { provider_type: provider } }]);
	});
	return () => current!;
}

let fakeOpHome: TestHome;

beforeAll(async () => {
	fakeOpHome = await createTestHome('hangar-fake-op-');
	opPath = await installFakeOp(join(fakeOpHome.path, 'bin'), { [OP_REFERENCE]: PLANTED });
});

afterAll(() => fakeOpHome?.dispose());

describe.each(['rpc', 'rest'] as const)('over %s', (kind) => {
	// Never set up, on a state of its own; every provider below is set up on the other one.
	const fresh = lazyDoor(kind);
	const configured = lazyDoor(kind);

	describe('before setup', () => {
		const current = useDoor(fresh);
		runCases(() => current().door, beforeSetup);
	});
	describe('environment provider', () => {
		const current = useDoor(configured, 'environment');
		runCases(() => current().door, readOnly('environment', ENV_SECRET));
	});
	describe('1password provider', () => {
		const current = useDoor(configured, '1password');
		runCases(() => current().door, readOnly('1password', OP_REFERENCE));
	});
	describe('encrypted provider', () => {
		const current = useDoor(configured, 'encrypted');
		beforeEach(() => emptyStore(current().door));
		runCases(() => current().door, encrypted);

		it('the value written is the value resolved', async () => {
			await arrange(current().door, [create('github'), { row: UpdateSecret, params: { key: 'github', value: `${PLANTED}-2` } }]);
			expect(await secretsService(secretsEnv(current().home)).resolve('github')).toBe(`${PLANTED}-2`);
		});
	});

	it('the planted value is in no response, no log line and no state file but the encrypted store', async () => {
		// Every case above once more, in the order of the tables, whatever else ran before.
		const scenario = await configured();
		const responses: string[] = [];
		for (const entry of [...beforeSetup, ...readOnly('environment', ENV_SECRET), ...readOnly('1password', OP_REFERENCE), ...encrypted]) {
			for (const step of [...(entry.given ?? []), entry]) {
				responses.push(JSON.stringify((await scenario.door.call(step.row, step.params)).body) ?? '');
			}
		}
		expect(responses.length).toBeGreaterThan(40);
		const leaks = responses.filter((text) => text.includes(PLANTED));
		expect(leaks).toEqual([]);
		expect(scenario.log()).toContain('secrets provider encrypted set up');
		expect(scenario.log()).not.toContain(PLANTED);
		const { store } = storePaths(scenario.home);
		const files = await filesUnder(scenario.home.path, new Set([store]));
		expect([...files.keys()].length).toBeGreaterThan(1);
		expect([...files].filter(([, text]) => text.includes(PLANTED)).map(([path]) => path)).toEqual([]);
	});
});
