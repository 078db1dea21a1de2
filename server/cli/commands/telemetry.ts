/**
 * `hangar telemetry show|set|unset`: Hangar's global `telemetry_config`, which new workloads
 * created without their own inherit.
 */
import type { Command } from 'commander';
import { HangarError } from '../../../protocol/errors.js';
import { TelemetryDefault } from '../../workloads/telemetryDefault.js';
import { addCommands, printJson, type Cli, type CommandFactory } from '../cli.js';
import { addTelemetryOptions, telemetryOf, type TelemetryOptions } from './workloads.js';

const defaults = (cli: Cli) => new TelemetryDefault(cli.environment.paths);

function showTelemetry(telemetry: Command, cli: Cli): Command {
	return telemetry
		.command('show')
		.description('Show the global telemetry_config')
		.option('--json', 'print JSON')
		.action(async (options: { json?: boolean }) => {
			const config = await defaults(cli).get();
			if (options.json) return printJson(config ?? {});
			process.stdout.write(config ? `${JSON.stringify(config, null, 2)}\n` : 'No global telemetry: new workloads send none unless run with --otel-* flags.\n');
		});
}

function setTelemetry(telemetry: Command, cli: Cli): Command {
	return addTelemetryOptions(telemetry.command('set').description('Set the global telemetry_config from --otel-* flags (replaces the previous one)')).action(
		async (options: TelemetryOptions) => {
			const config = telemetryOf(options);
			if (!config) throw new HangarError(400, 'give at least one --otel-* flag, for example --otel-endpoint http://127.0.0.1:4318');
			await defaults(cli).set(config);
			process.stdout.write('New workloads will send telemetry as set; existing ones keep theirs (change them with hangar edit NAME --otel-…).\n');
		},
	);
}

function unsetTelemetry(telemetry: Command, cli: Cli): Command {
	return telemetry
		.command('unset')
		.description('Remove the global telemetry_config')
		.action(async () => {
			await defaults(cli).set(undefined);
			process.stdout.write('No global telemetry.\n');
		});
}

function telemetryCommand(program: Command, cli: Cli): Command {
	const telemetry = program.command('telemetry').description('The OpenTelemetry settings new workloads inherit (traces, metrics, Prometheus)');
	addCommands(telemetry, cli, [showTelemetry, setTelemetry, unsetTelemetry]);
	return telemetry;
}

/** The area's top-level command. */
export const telemetryCommands: readonly CommandFactory[] = [telemetryCommand];
