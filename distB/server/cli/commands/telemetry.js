import { HangarError } from '../../../protocol/errors.js';
import { TelemetryDefault } from '../../workloads/telemetryDefault.js';
import { printJson } from '../cli.js';
import { addTelemetryOptions, telemetryOf } from './workloads.js';
export function registerTelemetryCommands(program, cli) {
    const telemetry = program.command('telemetry').description('The OpenTelemetry settings new workloads inherit (traces, metrics, Prometheus)');
    const defaults = () => new TelemetryDefault(cli.environment.paths);
    telemetry
        .command('show')
        .description('Show the global telemetry_config')
        .option('--json', 'print JSON')
        .action(async (options) => {
        const config = await defaults().get();
        if (options.json)
            return printJson(config ?? {});
        process.stdout.write(config ? `${JSON.stringify(config, null, 2)}\n` : 'No global telemetry: new workloads send none unless run with --otel-* flags.\n');
    });
    addTelemetryOptions(telemetry.command('set').description('Set the global telemetry_config from --otel-* flags (replaces the previous one)')).action(async (options) => {
        const config = telemetryOf(options);
        if (!config)
            throw new HangarError(400, 'give at least one --otel-* flag, for example --otel-endpoint http://127.0.0.1:4318');
        await defaults().set(config);
        process.stdout.write('New workloads will send telemetry as set; existing ones keep theirs (change them with hangar edit NAME --otel-…).\n');
    });
    telemetry
        .command('unset')
        .description('Remove the global telemetry_config')
        .action(async () => {
        await defaults().set(undefined);
        process.stdout.write('No global telemetry.\n');
    });
}
//# sourceMappingURL=telemetry.js.map