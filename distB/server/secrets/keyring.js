/**
 * The OS keyring (macOS Keychain, Windows Credential Manager, the Secret Service on Linux)
 * through `@napi-rs/keyring`, loaded on first use.
 *
 * Any failure means "no keyring": the module missing for this platform, no D-Bus session on a
 * headless machine, a locked collection, a prompt nobody answers. Callers then fall back to
 * other password sources. On Linux the entry is pinned to the Secret Service: the kernel
 * keyring the library would otherwise fall back to is emptied at logout or reboot, and a lost
 * password is a lost store.
 */
const SERVICE = 'hangar';
/** A keyring waiting on an unlock prompt must not hang a request forever. */
const TIMEOUT_MS = 15_000;
export class Keyring {
    account;
    enabled;
    entry;
    /**
     * @param account names the entry; the store's path, so that side-by-side installs and test
     *   homes never share (or overwrite) one password.
     * @param enabled false when `HANGAR_SECRETS_KEYRING=off`.
     */
    constructor(account, enabled) {
        this.account = account;
        this.enabled = enabled;
    }
    /** The stored password; `undefined` when there is none or no keyring. */
    async get() {
        return (await this.attempt((entry, signal) => entry.getPassword(signal))) ?? undefined;
    }
    /** Stores the password; false when no keyring could take it. */
    async set(password) {
        return (await this.attempt(async (entry, signal) => (await entry.setPassword(password, signal), true))) ?? false;
    }
    /** Removes the stored password, if a keyring is there to ask. */
    async delete() {
        await this.attempt((entry, signal) => entry.deletePassword(signal));
    }
    async attempt(work) {
        const entry = await (this.entry ??= this.open());
        if (!entry)
            return undefined;
        try {
            return await work(entry, AbortSignal.timeout(TIMEOUT_MS));
        }
        catch {
            return undefined;
        }
    }
    async open() {
        if (!this.enabled)
            return undefined;
        try {
            const { AsyncEntry } = await import('@napi-rs/keyring');
            return new AsyncEntry(SERVICE, this.account, { linux: { store: 'secret-service' } });
        }
        catch {
            return undefined;
        }
    }
}
//# sourceMappingURL=keyring.js.map