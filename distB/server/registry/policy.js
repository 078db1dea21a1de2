/**
 * The registry policy (`<config>/registry_policy.json`), for machines whose registries are
 * managed for the user (an organisation's provisioning, a dotfiles repo):
 *
 * ```json
 * { "locked": true, "message": "Registries are managed by IT" }
 * { "allowed_sources": ["https://registry.example.com/", "/opt/registries/"] }
 * ```
 *
 * `locked` refuses every change (update, reset, add, remove); `allowed_sources` refuses a new
 * source that starts with none of the listed prefixes (the embedded registry stays allowed).
 * Both answer 403. A policy file that cannot be read or parsed refuses every change too: a
 * policy must fail closed. It is read at each change, so editing it needs no restart.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { HangarError } from '../../protocol/errors.js';
import { describeJsonError } from '../json.js';
const RegistryPolicy = z.strictObject({
    locked: z.boolean().optional(),
    allowed_sources: z.array(z.string().min(1)).optional(),
    message: z.string().optional(),
});
export class RegistryPolicyFile {
    path;
    constructor(paths) {
        this.path = join(paths.config, 'registry_policy.json');
    }
    /** Throws 403 unless the policy lets `registry` change to `source` (an empty source: the embedded one). */
    async check(registry, action, source) {
        const policy = await this.read();
        if (!policy)
            return;
        const because = policy.message ? `: ${policy.message}` : '';
        if (policy.locked) {
            throw refusal(`cannot ${action} registry '${registry}': registries are locked by ${this.path}${because}`);
        }
        if (source && policy.allowed_sources && !policy.allowed_sources.some((prefix) => source.startsWith(prefix))) {
            const allowed = policy.allowed_sources.join(', ');
            throw refusal(`cannot ${action} registry '${registry}': ${source} is not among the sources ${this.path} allows (${allowed})${because}`);
        }
    }
    async read() {
        let text;
        try {
            text = await readFile(this.path, 'utf8');
        }
        catch (error) {
            if (error.code === 'ENOENT')
                return undefined;
            throw this.broken(error.message);
        }
        let raw;
        try {
            raw = JSON.parse(text);
        }
        catch (error) {
            throw this.broken(describeJsonError(error));
        }
        const parsed = RegistryPolicy.safeParse(raw);
        if (!parsed.success) {
            throw this.broken(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'policy'}: ${issue.message}`).join('; '));
        }
        return parsed.data;
    }
    broken(reason) {
        return refusal(`registry changes are refused: the policy file ${this.path} is invalid (${reason}); fix or remove it`);
    }
}
function refusal(message) {
    return new HangarError(403, message, 'registry_policy');
}
//# sourceMappingURL=policy.js.map