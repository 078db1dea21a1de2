/**
 * The `hangar` command tree. Each area registers its commands from its own module.
 */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { Cli, describeFailure } from './cli.js';
import { registerClientCommands } from './commands/clients.js';
import { registerDoorCommands } from './commands/doors.js';
import { registerGroupCommands } from './commands/groups.js';
import { registerRegistryCommands } from './commands/registry.js';
import { registerSecretCommands } from './commands/secrets.js';
import { registerWorkloadCommands } from './commands/workloads.js';
import { registerSkillCommands } from './commands/skills.js';
import { registerTelemetryCommands } from './commands/telemetry.js';

export function buildProgram(cli: Cli): Command {
	const program = new Command('hangar')
		.description('Manage MCP servers and agent skills across editors and agents')
		.version(VERSION, '-v, --version', 'print the version')
		.showHelpAfterError('(run with --help for usage)')
		.exitOverride();

	program
		.command('version')
		.description('Print the version')
		.option('--json', 'print JSON')
		.action((options: { json?: boolean }) => {
			process.stdout.write(options.json ? `${JSON.stringify({ version: `v${VERSION}` })}\n` : `hangar v${VERSION}\n`);
		});

	registerDoorCommands(program, cli);
	registerGroupCommands(program, cli);
	registerClientCommands(program, cli);
	registerRegistryCommands(program, cli);
	registerSecretCommands(program, cli);
	registerWorkloadCommands(program, cli);
	registerSkillCommands(program, cli);
	registerTelemetryCommands(program, cli);
	return program;
}

/** Runs the command line; exits non-zero with a one-line message on failure. */
export async function runCli(argv: readonly string[]): Promise<void> {
	try {
		await buildProgram(new Cli()).parseAsync(argv);
	} catch (error) {
		if (error instanceof CommanderError) process.exit(error.exitCode);
		const { message, exitCode } = describeFailure(error);
		process.stderr.write(`hangar: ${message}\n`);
		process.exit(exitCode);
	}
}
