/**
 * Where the encrypted store's password comes from, in order: the OS keyring, then
 * `HANGAR_SECRETS_PASSWORD`, then a generated key file (0600) beside the store, the source
 * that works on headless machines and in CI where no keyring runs.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { HangarError } from '../../protocol/errors.js';
import { readTextIfExists, writeFileAtomic } from '../store/atomic.js';
export const PASSWORD_VARIABLE = 'HANGAR_SECRETS_PASSWORD';
export class Passwords {
    keyring;
    keyFile;
    env;
    constructor(keyring, keyFile, env) {
        this.keyring = keyring;
        this.keyFile = keyFile;
        this.env = env;
    }
    /** Every password on hand, in the order they are tried. */
    async candidates() {
        const found = [];
        const fromKeyring = await this.keyring.get();
        if (fromKeyring)
            found.push({ source: 'keyring', password: fromKeyring });
        const fromEnvironment = this.env[PASSWORD_VARIABLE];
        if (fromEnvironment)
            found.push({ source: 'environment', password: fromEnvironment });
        const fromFile = await this.readKeyFile();
        if (fromFile)
            found.push({ source: 'file', password: fromFile });
        return found;
    }
    /** The password for a new setup: the caller's, else the environment's, else a random one. */
    choose(given) {
        if (given)
            return { password: given, origin: 'given' };
        const fromEnvironment = this.env[PASSWORD_VARIABLE];
        if (fromEnvironment)
            return { password: fromEnvironment, origin: 'environment' };
        return { password: randomBytes(32).toString('base64url'), origin: 'generated' };
    }
    /**
     * Makes `chosen` the first candidate from now on, and says where it is kept. A password
     * the caller gave is never written to a file: without a keyring it must be the one in
     * `HANGAR_SECRETS_PASSWORD`. Throws before changing anything.
     */
    async keep({ password, origin }) {
        if (origin === 'environment') {
            await this.keyring.delete();
            return 'environment';
        }
        if (await this.keyring.set(password))
            return 'keyring';
        if (origin === 'given') {
            if (this.env[PASSWORD_VARIABLE] === password)
                return 'environment';
            throw HangarError.badRequest(`no OS keyring is available to keep the password: set ${PASSWORD_VARIABLE} to it in the environment of every ` +
                'Hangar process instead, or set up without a password to use a generated key file', 'keyring_not_available');
        }
        await writeFileAtomic(this.keyFile, `${password}\n`, { mode: 0o600 });
        return 'file';
    }
    /** Removes copies of older passwords once `kept` holds the current one. */
    async forgetOthers(kept) {
        if (kept === 'file')
            await this.keyring.delete();
        else
            await rm(this.keyFile, { force: true });
    }
    /** Where each source is, for error messages. */
    describe(source) {
        switch (source) {
            case 'keyring':
                return 'the OS keyring';
            case 'environment':
                return PASSWORD_VARIABLE;
            case 'file':
                return `the key file ${this.keyFile}`;
        }
    }
    async readKeyFile() {
        return (await readTextIfExists(this.keyFile))?.trimEnd() || undefined;
    }
}
//# sourceMappingURL=passwords.js.map