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
import { LIGHT_KDF, newKeyDerivation, open, seal, SealedFileError, STRONG_KDF } from './sealed.js';
export class EncryptedStore {
    file;
    passwords;
    pending;
    constructor(file, passwords) {
        this.file = file;
        this.passwords = passwords;
        this.pending = `${file}.next`;
    }
    /** Every secret. A store that was never written is empty. */
    async read() {
        return withLock(this.file, async () => (await this.unlock()).secrets);
    }
    /**
     * Read-modify-write under the lock. `change` edits the map and returns what to hand back;
     * when it throws, the file is left as it was.
     */
    async update(change) {
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
    async reconfigure(given) {
        return withLock(this.file, async () => {
            const { secrets } = await this.unlock();
            const chosen = this.passwords.choose(given);
            const kdf = newKeyDerivation(chosen.origin === 'generated' ? LIGHT_KDF : STRONG_KDF);
            const sealed = await seal(secrets, chosen.password, kdf);
            await this.write(this.pending, sealed);
            let kept;
            try {
                kept = await this.passwords.keep(chosen);
                await this.confirmKept(chosen.password, kept);
            }
            catch (error) {
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
    async confirmKept(password, kept) {
        const candidates = await this.passwords.candidates();
        if (candidates.some((candidate) => candidate.password === password))
            return;
        throw new HangarError(500, `the new password could not be read back from ${this.passwords.describe(kept)}; the store was left as it was`, 'secrets_password_not_kept');
    }
    /** Opens the store with the first password that fits. Call under the lock. */
    async unlock() {
        await this.settlePending();
        const file = await readIfExists(this.file);
        if (!file)
            return { secrets: new Map() };
        const candidates = await this.passwords.candidates();
        for (const { password } of candidates) {
            try {
                const { secrets, kdf } = await open(file, password);
                return { secrets, key: { password, kdf } };
            }
            catch (error) {
                if (!(error instanceof SealedFileError))
                    throw error;
                if (error.reason === 'too_new')
                    throw this.tooNew();
                if (error.reason !== 'wrong_password')
                    throw this.damaged();
            }
        }
        throw this.noPasswordFits(candidates);
    }
    /** Finishes or drops a password change that a crash interrupted. */
    async settlePending() {
        const pending = await readIfExists(this.pending);
        if (!pending)
            return;
        for (const { password } of await this.passwords.candidates()) {
            try {
                await open(pending, password);
            }
            catch {
                continue;
            }
            await this.write(this.file, pending);
            break;
        }
        await rm(this.pending, { force: true });
    }
    /** The store file was deleted after setup: seal a new one with the current password. */
    async keyForNewStore() {
        const [first] = await this.passwords.candidates();
        if (!first)
            throw this.noPasswordFits([]);
        return { password: first.password, kdf: newKeyDerivation(STRONG_KDF) };
    }
    async write(path, sealed) {
        // An existing file keeps its mode through an atomic replace: make sure it is 0600.
        await chmod(path, 0o600).catch((error) => {
            if (error.code !== 'ENOENT')
                throw error;
        });
        await writeFileAtomic(path, sealed, { mode: 0o600 });
    }
    damaged() {
        return new HangarError(500, `the secrets store ${this.file} is damaged or was tampered with (it fails authentication) and was left untouched: ` +
            'restore it from a backup, or move it away and run `hangar secret setup` to start a new store', 'secrets_store_damaged');
    }
    tooNew() {
        return new HangarError(500, `the secrets store ${this.file} was written by a newer Hangar: upgrade Hangar to read it`, 'state_too_new');
    }
    noPasswordFits(tried) {
        const fix = 'set HANGAR_SECRETS_PASSWORD to the password of the store, or move the store away and run `hangar secret setup` to start a new one';
        if (tried.length === 0) {
            return new HangarError(500, `no password found for the secrets store ${this.file} (no OS keyring entry, HANGAR_SECRETS_PASSWORD unset, ` +
                `no key file ${this.passwords.keyFile}): ${fix}`, 'secrets_password_missing');
        }
        const sources = tried.map(({ source }) => this.passwords.describe(source)).join(', ');
        return new HangarError(500, `wrong password for the secrets store ${this.file} (tried ${sources}), or its header was altered; the store was left untouched: ${fix}`, 'secrets_wrong_password');
    }
}
async function readIfExists(path) {
    try {
        return await readFile(path);
    }
    catch (error) {
        if (error.code === 'ENOENT')
            return undefined;
        throw error;
    }
}
//# sourceMappingURL=encrypted.js.map