// Writes dist/protocol/manifest.json: the method and notification names of the operation
// table. `hangar daemon` answers `initialize` from it without loading the table itself
// (zod and every schema), which is most of its start-up time.
import { writeFileSync } from 'node:fs';

const table = await import('../dist/protocol/index.js');
const manifest = {
	methods: table.operations.map((row) => row.method),
	notifications: table.notifications.map((row) => row.method),
};
writeFileSync(new URL('../dist/protocol/manifest.json', import.meta.url), `${JSON.stringify(manifest, null, '\t')}\n`);
