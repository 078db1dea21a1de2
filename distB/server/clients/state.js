/**
 * What Hangar remembers about clients besides group membership (which lives in the group
 * records): clients registered the legacy global way, per-project registrations, and the
 * ledger of entries Hangar wrote into each configuration file — the only entries it ever
 * updates or removes.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { JsonDocument } from '../store/document.js';
const ProjectRegistration = z.object({
    client: z.string(),
    project_root: z.string(),
    groups: z.array(z.string()),
});
/** The entries Hangar wrote into one configuration file. */
const ManagedFile = z.object({
    path: z.string(),
    client: z.string(),
    project_root: z.string().optional(),
    entries: z.array(z.string()),
});
const ClientsState = z.object({
    /** Clients registered without groups (`clients/registerMany` with no `groups`): every running workload. */
    global: z.array(z.string()),
    projects: z.array(ProjectRegistration),
    managed: z.array(ManagedFile),
    /**
     * Detection targets (toolhive-facts §4.2) that did not exist until Hangar wrote a client's
     * configuration there: they alone do not make the client installed.
     */
    created: z.array(z.string()).optional(),
});
export function clientsStateDocument(paths) {
    return new JsonDocument(join(paths.state, 'clients.json'), { schema: ClientsState, version: 1 }, () => ({
        global: [],
        projects: [],
        managed: [],
    }));
}
//# sourceMappingURL=state.js.map