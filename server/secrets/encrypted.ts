/**
 * The `encrypted` provider's store: one sealed file (see sealed.ts), read and written under
 * a cross-process lock, replaced atomically, mode 0600.
 *
 * Changing the password re-encrypts the store in three steps that survive a crash at any
 * point: the store sealed under the new password goes to `<store>.next`, the new password
 * is kept (keyring or key file), then `.next` replaces the store. Whoever takes the lock next
 * and finds a `.next` finishes the change if a known password opens it, or drops it if not.
 */
import { chmod, readFile, rm } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import { writeFileAtomic } from '../store/atomic.js';
import { withLock } from '../store/lock.js';
import type { Candidate, Passwords, PasswordSource } from './passwords.js';
import { LIGHT_KDF, newKeyDerivation, open, seal, SealedFileError, STRONG_KDF, type KeyDerivation } from './sealed.js';

interface Unlocked {
	readonly secrets: Map<string, string>;
	/** The password and salt to seal with; absent while the store file does not exist. */
	readonly key?: { readonly password: string; readonly kdf: KeyDerivation };
}

export class EncryptedStore {
	private readonly pending: string;

	constructor(
		readonly file: string,
		private readonly passwords: Passwords,
	) {
		this.pending = `${file}.next`;
	}

	/** Every secret. A store that was never written is empty. */
	async read(): Promise<Map<string, string>> {
		return withLock(this.file, async () => (await this.unlock()).secrets);
	}

	/**
	 * Read-modify-write under the lock. `change` edits the map and returns what to hand back;
	 * when it throws, the file is left as it was.
	 */
	async update<R>(change: (secrets: Map<string, string>) => R): Promise<R> {
		return withLock(this.file, async () => {
			const { secrets, key } = await this.unlock();
			const result = change(secrets);
			const { password, kdf } = key ?? (await this.keyForNewStore());
			await this.write(this.file, await seal(secrets, password, kdf));
			return result;
		});
	}

	/**
	 * Re-encrypts every secret under a new password and a new salt (creating the store if
	 * needed), and says where the password is kept. Throws, leaving everything as it was, when
	 * the current store cannot be opened or the password cannot be kept.
	 */
	async reconfigure(given: string | undefined): Promise<PasswordSource> {
		return withLock(this.file, async () => {
			const { secrets } = await this.unlock();
			const chosen = this.passwords.choose(given);
			const kdf = newKeyDerivation(chosen.origin === 'generated' ? LIGHT_KDF : STRONG_KDF);
			const sealed = await seal(secrets, chosen.password, kdf);
			await this.write(this.pending, sealed);
			let kept: PasswordSource;
			try {
				kept = await this.passwords.keep(chosen);
				await this.confirmKept(chosen.password, kept);
			} catch (error) {
				await rm(this.pending, { force: true });
				throw error;
			}
			await this.write(this.file, sealed);
			await rm(this.pending, { force: true });
			await this.passwords.forgetOthers(kept);
			return kept;
		});
	}

	/** A keyring may accept a password and hand back another (an ambiguous entry): read it back. */
	private async confirmKept(password: string, kept: PasswordSource): Promise<void> {
		const candidates = await this.passwords.candidates();
		if (candidates.some((candidate) => candidate.password === password)) return;
		throw new HangarError(
			500,
			`the new password could not be read back from ${this.passwords.describe(kept)}; the store was left as it was`,
			'secrets_password_not_kept',
		);
	}

	/** Opens the store with the first password that fits. Call under the lock. */
	private async unlock(): Promise<Unlocked> {
		await this.settlePending();
		const file = await readIfExists(this.file);
		if (!file) return { secrets: new Map() };
		const candidates = await this.passwords.candidates();
		for (const { password } of candidates) {
			try {
				const { secrets, kdf } = await open(file, password);
				return { secrets, key: { password, kdf } };
			} catch (error) {
				if (!(error instanceof SealedFileError)) throw error;
				if (error.reason === 'too_new') throw this.tooNew();
				if (error.reason !== 'wrong_password') throw this.damaged();
			}
		}
		throw this.noPasswordFits(candidates);
	}

	/** Finishes or drops a password change that a crash interrupted. */
	private async settlePending(): Promise<void> {
		const pending = await readIfExists(this.pending);
		if (!pending) return;
		for (const { password } of await this.passwords.candidates()) {
			try {
				await open(pending, password);
			} catch {
				continue;
			}
			await this.write(this.file, pending);
			break;
		}
		await rm(this.pending, { force: true });
	}

	/** The store file was deleted after setup: seal a new one with the current password. */
	private async keyForNewStore(): Promise<{ password: string; kdf: KeyDerivation }> {
		const [first] = await this.passwords.candidates();
		if (!first) throw this.noPasswordFits([]);
		return { password: first.password, kdf: newKeyDerivation(STRONG_KDF) };
	}

	private async write(path: string, sealed: Buffer): Promise<void> {
		// An existing file keeps its mode through an atomic replace: make sure it is 0600.
		await chmod(path, 0o600).catch((error: NodeJS.ErrnoException) => {
			if (error.code !== 'ENOENT') throw error;
		});
		await writeFileAtomic(path, sealed, { mode: 0o600 });
	}

	private damaged(): HangarError {
		return new HangarError(
			500,
			`the secrets store ${this.file} is damaged or was tampered with (it fails authentication) and was left untouched: ` +
				'restore it from a backup, or move it away and run `hangar secret setup` to start a new store',
			'secrets_store_damaged',
		);
	}

	private tooNew(): HangarError {
		return new HangarError(
			500,
			`the secrets store ${this.file} was written by a newer Hangar: upgrade Hangar to read it`,
			'state_too_new',
		);
	}

	private noPasswordFits(tried: readonly Candidate[]): HangarError {
		const fix =
			'set HANGAR_SECRETS_PASSWORD to the password of the store, or move the store away and run `hangar secret setup` to start a new one';
		if (tried.length === 0) {
			return new HangarError(
				500,
				`no password found for the secrets store ${this.file} (no OS keyring entry, HANGAR_SECRETS_PASSWORD unset, ` +
					`no key file ${this.passwords.keyFile}): ${fix}`,
				'secrets_password_missing',
			);
		}
		const sources = tried.map(({ source }) => this.passwords.describe(source)).join(', ');
		return new HangarError(
			500,
			`wrong password for the secrets store ${this.file} (tried ${sources}), or its header was altered; the store was left untouched: ${fix}`,
			'secrets_wrong_password',
		);
	}
}

async function readIfExists(path: string): Promise<Buffer | undefined> {
	try {
		return await readFile(path);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
		throw error;
	}
}
