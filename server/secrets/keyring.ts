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

interface Entry {
	getPassword(signal?: AbortSignal | null): Promise<string | null>;
	setPassword(password: string, signal?: AbortSignal | null): Promise<void>;
	deletePassword(signal?: AbortSignal | null): Promise<boolean>;
}

export class Keyring {
	private entry: Promise<Entry | undefined> | undefined;

	/**
	 * @param account names the entry; the store's path, so that side-by-side installs and test
	 *   homes never share (or overwrite) one password.
	 * @param enabled false when `HANGAR_SECRETS_KEYRING=off`.
	 */
	constructor(
		private readonly account: string,
		private readonly enabled: boolean,
	) {}

	/** The stored password; `undefined` when there is none or no keyring. */
	async get(): Promise<string | undefined> {
		return (await this.attempt((entry, signal) => entry.getPassword(signal))) ?? undefined;
	}

	/** Stores the password; false when no keyring could take it. */
	async set(password: string): Promise<boolean> {
		return (await this.attempt(async (entry, signal) => (await entry.setPassword(password, signal), true))) ?? false;
	}

	/** Removes the stored password, if a keyring is there to ask. */
	async delete(): Promise<void> {
		await this.attempt((entry, signal) => entry.deletePassword(signal));
	}

	private async attempt<T>(work: (entry: Entry, signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
		const entry = await (this.entry ??= this.open());
		if (!entry) return undefined;
		try {
			return await work(entry, AbortSignal.timeout(TIMEOUT_MS));
		} catch {
			return undefined;
		}
	}

	private async open(): Promise<Entry | undefined> {
		if (!this.enabled) return undefined;
		try {
			const { AsyncEntry } = await import('@napi-rs/keyring');
			return new AsyncEntry(SERVICE, this.account, { linux: { store: 'secret-service' } });
		} catch {
			return undefined;
		}
	}
}
