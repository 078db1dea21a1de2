/**
 * The `1password` provider: reads `op://vault/item/field` references with the 1Password CLI
 * (`op read`), which signs in on its own (`OP_SERVICE_ACCOUNT_TOKEN` or the desktop app).
 * Read-only. The value travels on `op`'s stdout only; the command line holds the reference.
 */
import { execFile } from 'node:child_process';
import { HangarError } from '../../protocol/errors.js';

const REFERENCE = /^op:\/\/[^/]+\/[^/]+\/.+$/;
const TIMEOUT_MS = 30_000;
/** What `op` prints when the vault, item or field does not exist. */
const NOT_FOUND = /isn't (an item|a vault|a field)|could not find|not found|no item/i;

interface Outcome {
	readonly stdout: string;
	readonly stderr: string;
}

export class OnePasswordCli {
	private readonly env: NodeJS.ProcessEnv;

	/** `op` gets Hangar's environment minus Hangar's own secrets (the store password, HANGAR_SECRET_*). */
	constructor(env: NodeJS.ProcessEnv) {
		this.env = Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('HANGAR_SECRET')));
	}

	/** Throws a 400 that says how to install `op` when it is not on the PATH. */
	async ensureInstalled(): Promise<void> {
		await this.run(['--version']);
	}

	/** The value behind a reference; `undefined` when 1Password has no such item or field. */
	async read(reference: string): Promise<string | undefined> {
		if (!REFERENCE.test(reference)) {
			throw HangarError.badRequest(
				`1password secrets are named by reference, like op://vault/item/field (got "${reference}")`,
				'invalid_op_reference',
			);
		}
		try {
			return (await this.run(['read', '--no-newline', reference])).stdout;
		} catch (error) {
			if (error instanceof OpFailure && NOT_FOUND.test(error.stderr)) return undefined;
			throw error instanceof OpFailure ? error.toHangarError() : error;
		}
	}

	private run(args: readonly string[]): Promise<Outcome> {
		return new Promise((resolve, reject) => {
			execFile('op', args, { env: this.env, timeout: TIMEOUT_MS, maxBuffer: 1024 ** 2, windowsHide: true }, (error, stdout, stderr) => {
				if (!error) return resolve({ stdout, stderr });
				if ((error as NodeJS.ErrnoException).code === 'ENOENT') return reject(notInstalled());
				reject(new OpFailure(stderr));
			});
		});
	}
}

function notInstalled(): HangarError {
	return HangarError.badRequest(
		'the 1password provider needs the 1Password CLI `op`, which is not installed or not on the PATH: install it ' +
			'(https://developer.1password.com/docs/cli/get-started/) and sign it in, e.g. with OP_SERVICE_ACCOUNT_TOKEN',
		'op_not_installed',
	);
}

/** `op` ran and failed; its stderr names the cause (never a secret's value). */
class OpFailure extends Error {
	constructor(readonly stderr: string) {
		super('op failed');
	}

	toHangarError(): HangarError {
		const cause = this.stderr
			.split('\n')
			.map((line) => line.replace(/^\[ERROR\]\s+\S+\s+\S+\s+/, '').trim())
			.find(Boolean);
		return new HangarError(502, `the 1Password CLI failed: ${(cause ?? 'no message').slice(0, 300)}`, 'op_failed');
	}
}
