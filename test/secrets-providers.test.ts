/**
 * `resolve`, the call the workloads service makes when a container starts, against each
 * provider: the environment, 1Password through an `op` executable (a real missing one, and a
 * stand-in on the PATH), and `HANGAR_SECRETS_PROVIDER`.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SecretsProviderType } from '../protocol/protocol.secrets.js';
import type { Logger } from '../server/log.js';
import { SecretsService } from '../server/secrets/service.js';
import { resolvePaths } from '../server/store/paths.js';
import { installFakeOp, secretsEnv } from './fixtures/secrets/support.js';
import { hangarErrorOf } from './support/errors.js';
import { createTestHome, type TestHome } from './support/home.js';
import { runHangar } from './support/processes.js';

const OP_VALUE = 'op-value-7f3a';
const ENV_VALUE = 'env-value-91c2';

/** Holds the `op` folders; each test's state is a home of its own (see `useState`). */
let bins: TestHome;
let state: TestHome;
let noOpPath: string;
let fakeOpPath: string;
const logged: string[] = [];

beforeAll(async () => {
	bins = await createTestHome('hangar-secrets-providers-bin-');
	// An empty folder as the whole PATH: `op` is missing for real, as on a machine without it.
	noOpPath = join(bins.path, 'empty-bin');
	await mkdir(noOpPath);
	fakeOpPath = await installFakeOp(join(bins.path, 'fake-bin'), { 'op://dev/github/token': OP_VALUE });
});
afterAll(() => bins.dispose());

/** Before each test of the enclosing describe: a new state, with `provider` set up unless none is given. */
function useState(provider?: SecretsProviderType): void {
	beforeEach(async () => {
		state = await createTestHome('hangar-secrets-providers-');
		if (provider) await service({ PATH: fakeOpPath }).setup(provider, undefined);
	});
	afterEach(() => state.dispose());
}

const capturing: Logger = {
	debug: (line) => logged.push(line),
	info: (line) => logged.push(line),
	warn: (line) => logged.push(line),
	error: (line) => logged.push(line),
};

function service(extra: NodeJS.ProcessEnv = {}): SecretsService {
	const env = secretsEnv(state, extra);
	return new SecretsService({ paths: resolvePaths(env), log: capturing }, env);
}

describe('before setup', () => {
	useState();

	it('resolve is 404 secrets provider not configured', async () => {
		const error = await hangarErrorOf(service().resolve('github'));
		expect(error).toMatchObject({ status: 404, code: 'secrets_not_setup' });
		expect(error.message).toMatch(/^secrets provider not configured/);
	});

	it('HANGAR_SECRETS_PROVIDER=environment needs no setup; other types still do', async () => {
		const fromEnvironment = service({ HANGAR_SECRETS_PROVIDER: 'environment', HANGAR_SECRET_github: ENV_VALUE });
		expect(await fromEnvironment.resolve('github')).toBe(ENV_VALUE);
		expect(await fromEnvironment.provider()).toMatchObject({ provider_type: 'environment' });
		expect(await hangarErrorOf(service({ HANGAR_SECRETS_PROVIDER: 'encrypted' }).resolve('github'))).toMatchObject({ status: 404 });
		const invalid = await hangarErrorOf(service({ HANGAR_SECRETS_PROVIDER: 'vault' }).resolve('github'));
		expect(invalid.message).toContain('valid types: encrypted, 1password, environment');
	});
});

describe('environment provider', () => {
	useState('environment');

	it('reads HANGAR_SECRET_<name>, as written or upper-cased', async () => {
		const secrets = service({ HANGAR_SECRET_github: ENV_VALUE, HANGAR_SECRET_API_TOKEN: `${ENV_VALUE}-2` });
		expect(await secrets.resolve('github')).toBe(ENV_VALUE);
		expect(await secrets.resolve('api-token')).toBe(`${ENV_VALUE}-2`);
	});

	it('a variable that is not set is 404 secret not found', async () => {
		const error = await hangarErrorOf(service({ HANGAR_SECRET_other: ENV_VALUE }).resolve('absent'));
		expect(error).toMatchObject({ status: 404, code: 'secret_not_found', message: 'secret "absent" not found' });
	});
});

describe('1password provider', () => {
	useState('1password');

	it('setup without `op` installed is a 400 that says what to install', async () => {
		await service().setup('environment', undefined);
		const result = await runHangar(['secret', 'setup', '--provider', '1password'], secretsEnv(state, { PATH: noOpPath }));
		expect(result.code).toBe(2);
		expect(result.stderr).toMatch(/^hangar: the 1password provider needs the 1Password CLI `op`, which is not installed/);
		expect(result.stderr).toContain('https://developer.1password.com/docs/cli/');
		expect((await service().provider()).provider_type).toBe('environment');
	});

	it('setup succeeds with `op` on the PATH', async () => {
		const result = await runHangar(['secret', 'setup', '--provider', '1password'], secretsEnv(state, { PATH: fakeOpPath }));
		expect(result, result.stderr).toMatchObject({ code: 0, stdout: 'Secrets provider reconfigured (1password).\n' });
	});

	it('resolves op:// references through `op read`, exactly as stored', async () => {
		expect(await service({ PATH: fakeOpPath }).resolve('op://dev/github/token')).toBe(OP_VALUE);
	});

	it('a missing item is 404; a failing `op` is 502 with its reason; a plain name is 400', async () => {
		const secrets = service({ PATH: fakeOpPath });
		expect(await hangarErrorOf(secrets.resolve('op://dev/missing/token'))).toMatchObject({
			status: 404,
			message: 'secret "op://dev/missing/token" not found',
		});
		const signedOut = await hangarErrorOf(secrets.resolve('op://dev/signed-out/token'));
		expect(signedOut).toMatchObject({ status: 502, code: 'op_failed' });
		expect(signedOut.message).toBe(
			'the 1Password CLI failed: You are not currently signed in. Please run `op signin --help` for instructions',
		);
		expect(await hangarErrorOf(secrets.resolve('github'))).toMatchObject({ status: 400, code: 'invalid_op_reference' });
	});

	it('`op` is not given the store password nor HANGAR_SECRET_* variables', async () => {
		const secrets = service({ PATH: fakeOpPath, HANGAR_SECRETS_PASSWORD: 'store password', HANGAR_SECRET_github: ENV_VALUE });
		const names = (await secrets.resolve('op://dev/environment/names')).trim().split(' ');
		expect(names).toContain('HANGAR_HOME');
		expect(names.filter((name) => name.startsWith('HANGAR_SECRET'))).toEqual([]);
	});

	it('resolving after `op` went away is the same clear 400', async () => {
		const error = await hangarErrorOf(service({ PATH: noOpPath }).resolve('op://dev/github/token'));
		expect(error).toMatchObject({ status: 400, code: 'op_not_installed' });
	});
});

describe('logs', () => {
	useState('1password');

	it('name secrets but never carry their values', async () => {
		// Its own resolutions, besides whatever the other tests logged.
		expect(await service({ PATH: fakeOpPath }).resolve('op://dev/github/token')).toBe(OP_VALUE);
		expect(await service({ HANGAR_SECRETS_PROVIDER: 'environment', HANGAR_SECRET_github: ENV_VALUE }).resolve('github')).toBe(ENV_VALUE);
		expect(logged.some((line) => line.includes('resolved from the 1password provider'))).toBe(true);
		expect(logged.filter((line) => line.includes(OP_VALUE) || line.includes(ENV_VALUE))).toEqual([]);
	});
});
