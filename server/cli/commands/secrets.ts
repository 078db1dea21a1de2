/**
 * `hangar secret setup|provider|set|ls|rm`.
 *
 * Values and passwords are read from stdin or typed at a prompt that does not echo; never from
 * the command line, where other users can read them in the process list and shell history.
 */
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import {
	SECRETS_PROVIDER_TYPES,
} from '../../../protocol/protocol.secrets.js';
import { addCommands, printJson, printTable, type Cli, type CommandFactory } from '../cli.js';

function setupSecrets(secret: Command, cli: Cli): Command {
	return secret
		.command('setup')
		.description('Set up or reconfigure the secrets provider (re-encrypts stored secrets)')
		.option('--provider <type>', `one of ${SECRETS_PROVIDER_TYPES.join(', ')}`, 'encrypted')
		.option(
			'--password-stdin',
			'encrypted: read the password from stdin (or a prompt); without it, HANGAR_SECRETS_PASSWORD or a generated key is used',
		)
		.action(async (options: { provider: string; passwordStdin?: boolean }) => {
			const password = options.passwordStdin ? await readSecretInput('Password', { confirm: true }) : undefined;
			const result = await cli.call('secrets/setup', { provider_type: options.provider as never, password });
			// The REST message keeps ToolHive's wording ("setup successfully"); the CLI says it plainly.
			const done = result.message.includes('reconfigured') ? 'reconfigured' : 'set up';
			process.stdout.write(`Secrets provider ${done} (${result.provider_type}).\n`);
		});
}

const NOT_SET_UP_HINT =
	'Run `hangar secret setup` for the encrypted store (the default; a password from the OS keyring, $HANGAR_SECRETS_PASSWORD or a prompt), or `hangar secret setup --provider environment` to read HANGAR_SECRET_<NAME> variables.';

function showProvider(secret: Command, cli: Cli): Command {
	return secret
		.command('provider')
		.description('Show the secrets provider and what it can do')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const provider = await cli.call('secrets/getProvider', {}).catch((error: unknown) => {
				// Nothing set up is an answer here, not a failure (the API's 404 stays ToolHive's).
				if (error instanceof HangarError && error.code === 'secrets_not_setup') return undefined;
				throw error;
			});
			if (!provider) {
				if (options.json) return printJson({ configured: false, setup: NOT_SET_UP_HINT });
				process.stdout.write(`No secrets provider is set up yet. ${NOT_SET_UP_HINT}\n`);
				return;
			}
			if (options.json) return printJson({ configured: true, ...provider });
			const capabilities = Object.entries(provider.capabilities ?? {})
				.filter(([, enabled]) => enabled)
				.map(([name]) => name.replace(/^can_/, ''));
			printTable([provider], { name: (p) => p.name, type: (p) => p.provider_type, capabilities: () => capabilities }, '');
		});
}

function setSecret(secret: Command, cli: Cli): Command {
	return secret
		.command('set')
		.description('Create or update a secret; the value is read from stdin or a hidden prompt')
		.argument('<name>', 'the secret\'s key')
		.action(async (name: string) => {
			const value = await readSecretInput(`Value for ${name}`);
			try {
				await cli.call('secrets/create', { key: name, value });
				process.stdout.write(`Secret ${name} created.\n`);
			} catch (error) {
				if (!(error instanceof HangarError) || error.status !== 409) throw error;
				await cli.call('secrets/update', { key: name, value });
				process.stdout.write(`Secret ${name} updated.\n`);
			}
		});
}

function listSecrets(secret: Command, cli: Cli): Command {
	return secret
		.command('ls')
		.alias('list')
		.description('List the keys of stored secrets (never their values)')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const { keys } = await cli.call('secrets/listKeys', {});
			if (options.json) return printJson(keys);
			printTable(keys, { key: (k) => k.key }, 'No secrets.');
		});
}

function deleteSecret(secret: Command, cli: Cli): Command {
	return secret
		.command('rm')
		.alias('delete')
		.description('Delete a secret')
		.argument('<name>')
		.action(async (name: string) => {
			await cli.call('secrets/delete', { key: name });
			process.stdout.write(`Secret ${name} deleted.\n`);
		});
}

function secretCommand(program: Command, cli: Cli): Command {
	const secret = program.command('secret').description('Manage secrets and the secrets provider');
	addCommands(secret, cli, [setupSecrets, showProvider, setSecret, listSecrets, deleteSecret]);
	return secret;
}

/** The area's top-level command. */
export const secretCommands: readonly CommandFactory[] = [secretCommand];

/** A value typed at a hidden prompt on a terminal, else all of stdin minus one trailing newline. */
async function readSecretInput(label: string, options: { confirm?: boolean } = {}): Promise<string> {
	if (!process.stdin.isTTY) {
		let text = '';
		for await (const chunk of process.stdin) text += String(chunk);
		const value = text.replace(/\r?\n$/, '');
		if (!value) throw HangarError.badRequest(`no ${label.toLowerCase()} on stdin: pipe it in, or run on a terminal to be prompted`);
		return value;
	}
	const value = await promptHidden(`${label}: `);
	if (!value) throw HangarError.badRequest(`no ${label.toLowerCase()} given`);
	if (options.confirm && (await promptHidden(`${label} again: `)) !== value) {
		throw HangarError.badRequest(`the two ${label.toLowerCase()}s differ`);
	}
	return value;
}

/** Reads a line from the terminal in raw mode, echoing nothing. */
async function promptHidden(question: string): Promise<string> {
	const input = process.stdin;
	// Raw mode first: a key typed as soon as the prompt shows must not be echoed.
	input.setRawMode(true);
	input.setEncoding('utf8');
	input.resume();
	process.stderr.write(question);
	try {
		return await new Promise<string>((resolve, reject) => {
			let typed: string[] = [];
			const onData = (chunk: string) => {
				for (const char of chunk) {
					if (char === '\r' || char === '\n' || char === '\u0004') return finish(() => resolve(typed.join('')));
					if (char === '\u0003') return finish(() => reject(HangarError.cancelled('reading the value')));
					if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
					else typed.push(char);
				}
			};
			const finish = (settle: () => void) => {
				input.off('data', onData);
				settle();
			};
			input.on('data', onData);
		});
	} finally {
		input.setRawMode(false);
		input.pause();
		process.stderr.write('\n');
	}
}
