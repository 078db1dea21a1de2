// Writes the build's manifests, read at start-up instead of loading the code behind them:
// - dist/protocol/manifest.json: the method and notification names of the operation table.
//   `hangar daemon` answers `initialize` from it without loading the table itself (zod and
//   every schema), which is most of its start-up time. And each row's plain params schema
//   (protocol/plainParams.ts), which checks a call's params without zod.
// - dist/server/cli/commands.json: each CLI area's top-level commands as `--help` lists them,
//   so `hangar --help` lists every command while loading none of the areas, and that help
//   text itself (80 columns), which `hangar --help` prints without building the tree, and the
//   tree's shape (names, options, arguments), from which `hangar __complete` answers.
import { writeFileSync } from 'node:fs';

const table = await import('../dist/protocol/index.js');
const manifest = table.manifestOf(table.operations, table.notifications);
writeFileSync(new URL('../dist/protocol/manifest.json', import.meta.url), `${JSON.stringify(manifest, null, '\t')}\n`);

const program = await import('../dist/server/cli/program.js');
const { Cli } = await import('../dist/server/cli/cli.js');
const commands = { areas: {}, help: '', tree: undefined };
for (const area of Object.keys(program.AREAS)) commands.areas[area] = await program.summarise(area);
const full = await program.buildProgram(new Cli(), [], true);
full.configureHelp({ ...full.configureHelp(), helpWidth: 80 });
commands.help = full.helpInformation();
const { shapeOf } = await import('../dist/server/cli/candidates.js');
commands.tree = shapeOf(full);
writeFileSync(new URL('../dist/server/cli/commands.json', import.meta.url), `${JSON.stringify(commands, null, '\t')}\n`);
