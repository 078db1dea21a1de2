/**
 * Skills: agent skills (a directory with a `SKILL.md`) installed for clients, per user or per
 * project, plus local OCI builds and a project's lock file (`hangar.lock.yaml`).
 *
 * Scope rules: `scope` defaults to `user`; a `project_root` without `scope` means `project`;
 * `project_root` with `user` is a 400. A project root must be an absolute path to an existing
 * git repository without symlinks.
 */
import { z } from 'zod';
import { AbsolutePath, CLIENT_APPS, ClientApp, GroupName, NoParams, NoResult, requiredString, Scope, SkillName, } from './common.js';
import { notification, operation } from './operation.js';
// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------
/** Metadata from a skill's frontmatter. */
export const SkillMetadata = z.object({
    name: z.string().optional(),
    description: z.string().optional(),
    version: z.string().optional(),
    author: z.string().optional(),
    tags: z.array(z.string()).optional(),
});
/** A skill an installed skill requires (`toolhive.requires`). */
export const SkillDependency = z.object({
    name: z.string().optional(),
    reference: z.string().optional(),
    digest: z.string().optional(),
});
/** Install state of a skill. */
export const SkillInstallStatus = z.enum(['installed', 'pending', 'failed']);
/** An installed skill (spec 2.11). */
export const InstalledSkill = z.object({
    metadata: SkillMetadata.optional(),
    scope: Scope.optional(),
    /** Project root for project-scoped skills; empty for user scope. */
    project_root: z.string().optional(),
    /** The OCI or git reference it was installed from. */
    reference: z.string().optional(),
    tag: z.string().optional(),
    /** OCI manifest digest or git commit. */
    digest: z.string().optional(),
    status: SkillInstallStatus.optional(),
    installed_at: z.string().optional(),
    /** Client ids the skill is installed for. */
    clients: z.array(z.string()).optional(),
    dependencies: z.array(SkillDependency).optional(),
    /** Tracked in the project's lock file. */
    managed: z.boolean().optional(),
});
/** Details of an installed skill. */
export const SkillInfo = z.object({
    metadata: SkillMetadata.optional(),
    installed_skill: InstalledSkill.optional(),
    /**
     * True for a project skill: its lock file entry is recorded `unsigned` (Hangar verifies no
     * signatures, so ToolHive's `provenance` is never sent).
     */
    unsigned: z.boolean().optional(),
});
/** Result of validating a skill (spec 2.13). */
export const SkillValidationResult = z.object({
    valid: z.boolean(),
    errors: z.array(z.string()).optional(),
    warnings: z.array(z.string()).optional(),
});
/** A skill read by reference without installing it (spec 2.12). */
export const SkillContent = z.object({
    name: z.string().optional(),
    description: z.string().optional(),
    version: z.string().optional(),
    license: z.string().optional(),
    /** The raw `SKILL.md`. */
    body: z.string().optional(),
    files: z.array(z.object({ path: z.string(), size: z.number().int() })).optional(),
});
/** A skill artifact built into the local OCI store. */
export const SkillBuild = z.object({
    tag: z.string().optional(),
    digest: z.string().optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    version: z.string().optional(),
});
/** Why a sync or upgrade of one skill failed: ToolHive's values; Hangar never reports the signature ones. */
export const SkillFailureReason = z.enum([
    'registry-unreachable',
    'digest-missing',
    'validation-rejected',
    'lock-write-failed',
    'signature-invalid',
    'signer-mismatch',
    'provenance-field-mismatch',
    'unsigned-rejected',
    'unknown',
]);
/** What `skills/sync` did, skill by skill. */
export const SkillSyncResult = z.object({
    installed: z.array(z.string()).optional(),
    already_current: z.array(z.string()).optional(),
    drifted: z.array(z.string()).optional(),
    missing: z.array(z.string()).optional(),
    removed_from_lock: z.array(z.string()).optional(),
    pruned: z.array(z.string()).optional(),
    never_managed: z.array(z.string()).optional(),
    failed: z
        .array(z.object({ name: z.string(), error: z.string().optional(), reason: SkillFailureReason.optional() }))
        .optional(),
});
/** Outcome of upgrading one skill (`signer-change-blocked` is ToolHive's; Hangar never reports it). */
export const SkillUpgradeOutcome = z.object({
    name: z.string(),
    status: z.enum(['upgraded', 'up-to-date', 'not-upgradable', 'ref-change-blocked', 'signer-change-blocked', 'failed']),
    reason: SkillFailureReason.optional(),
    error: z.string().optional(),
    old_digest: z.string().optional(),
    new_digest: z.string().optional(),
    new_resolved_reference: z.string().optional(),
});
/** What `skills/upgrade` did. */
export const SkillUpgradeResult = z.object({ outcomes: z.array(SkillUpgradeOutcome).optional() });
// ---------------------------------------------------------------------------------------------
// Params
// ---------------------------------------------------------------------------------------------
/**
 * Target clients: client ids, or `["all"]` for every skill-supporting client detected on this
 * machine (the same as omitting the list).
 */
export const SkillClients = z
    .array(z.enum([...CLIENT_APPS, 'all'], {
    error: (issue) => `unsupported client type: ${String(issue.input)}`,
}))
    .refine((clients) => !clients.includes('all') || clients.length === 1, '"all" cannot be combined with other clients');
const ScopeParams = {
    scope: Scope.optional(),
    project_root: AbsolutePath.optional(),
};
/** A file of an inline skill, relative to the skill directory. */
export const InlineSkillFile = z.object({
    path: requiredString('file path')
        .refine((path) => !/^([\\/]|[A-Za-z]:)/.test(path), 'file path must be relative')
        .refine((path) => !path.includes('\0'), 'file path may not contain NUL bytes')
        .refine((path) => !path.split(/[\\/]/).includes('..'), 'file path may not contain ".." segments')
        .refine((path) => path !== 'SKILL.md', 'SKILL.md is given by skill_md'),
    content: z.string(),
});
// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------
/** Lists installed skills, optionally filtered by scope, client, project and group. */
export const ListSkills = operation({
    method: 'skills/list',
    summary: 'List installed skills',
    params: z.object({ ...ScopeParams, client: ClientApp.optional(), group: GroupName.optional() }),
    result: z.object({ skills: z.array(InstalledSkill) }),
    rest: {
        verb: 'GET',
        path: '/api/v1beta/skills',
        status: 200,
        query: ['scope', 'client', 'project_root', 'group'],
    },
    errors: [400, 404, 500],
    example: {},
});
/**
 * Installs a skill by name (local build or registry), OCI reference or `git://` reference, for
 * the given clients, and adds it to `group` (`default`). Hangar does not verify signatures:
 * `allow_unsigned` is accepted (ToolHive clients send it) and ignored, no install is refused for
 * a missing signature, and a project install answers `unsigned: true`, as its lock file entry
 * records. An existing unmanaged directory is a 409 unless `force`.
 */
export const InstallSkill = operation({
    method: 'skills/install',
    summary: 'Install a skill',
    params: z.object({
        /** Skill name, `namespace/name`, OCI reference or `git://host/owner/repo[@ref][#path]`. */
        name: requiredString('name'),
        /** Version to install; empty means latest. */
        version: z.string().optional(),
        ...ScopeParams,
        clients: SkillClients.optional(),
        /** Overwrite skill directories not managed by the service. */
        force: z.boolean().optional(),
        /** Accepted for ToolHive compatibility and ignored: Hangar verifies no signatures. */
        allow_unsigned: z.boolean().optional(),
        group: GroupName.optional(),
    }),
    result: z.object({
        skill: InstalledSkill,
        /** True for a project install: the lock file entry is recorded unsigned. */
        unsigned: z.boolean().optional(),
        /**
         * Hangar extension: what the install went past — rules that affect neither safety nor
         * loading (a long description), or a git skill whose SKILL.md names it otherwise than its folder.
         */
        warnings: z.array(z.string()).optional(),
    }),
    rest: {
        verb: 'POST',
        path: '/api/v1beta/skills',
        status: 201,
        location: (params, result) => '/api/v1beta/skills/' + encodeURIComponent(result?.skill?.metadata?.name || params.name),
    },
    errors: [400, 401, 403, 404, 409, 422, 429, 500, 502, 504],
    example: { name: 'contract-missing' },
});
/** Returns an installed skill with its metadata. */
export const GetSkill = operation({
    method: 'skills/get',
    summary: 'Get skill details',
    params: z.object({ name: SkillName, ...ScopeParams }),
    result: SkillInfo,
    rest: { verb: 'GET', path: '/api/v1beta/skills/{name}', status: 200, query: ['scope', 'project_root'] },
    errors: [400, 404, 500],
    example: { name: 'contract-missing' },
});
/** Removes an installed skill from every client directory and from all groups. */
export const UninstallSkill = operation({
    method: 'skills/uninstall',
    summary: 'Uninstall a skill',
    params: z.object({
        name: SkillName,
        ...ScopeParams,
        /** Hangar extension: only from this client's folder; the skill stays for the others. */
        client: ClientApp.optional(),
    }),
    result: NoResult,
    rest: {
        verb: 'DELETE',
        path: '/api/v1beta/skills/{name}',
        status: 204,
        query: ['scope', 'project_root', 'client'],
        response: 'empty',
    },
    errors: [400, 404, 500],
    example: { name: 'contract-missing' },
});
/**
 * Validates a skill: a directory on the service's file system (`path`), or — Hangar extension,
 * for unsaved editor buffers — an inline `skill_md` with optional extra `files`. Exactly one of
 * `path` and `skill_md`. With `path`, the skill name must equal the directory name.
 */
export const ValidateSkill = operation({
    method: 'skills/validate',
    summary: 'Validate a skill',
    params: z
        .object({
        path: AbsolutePath.optional(),
        /** Hangar extension: the text of `SKILL.md`. */
        skill_md: z.string().optional(),
        /** Hangar extension: other files of the inline skill. */
        files: z.array(InlineSkillFile).optional(),
    })
        .superRefine((params, ctx) => {
        if (params.path !== undefined && params.skill_md !== undefined) {
            ctx.addIssue({ code: 'custom', message: 'cannot specify both path and skill_md' });
        }
        else if (params.path === undefined && params.skill_md === undefined) {
            ctx.addIssue({ code: 'custom', path: ['path'], message: 'path is required (or skill_md)' });
        }
        if (params.files !== undefined && params.skill_md === undefined) {
            ctx.addIssue({ code: 'custom', path: ['files'], message: 'files may only be given with skill_md' });
        }
    }),
    result: SkillValidationResult,
    rest: { verb: 'POST', path: '/api/v1beta/skills/validate', status: 200 },
    errors: [400, 500],
    example: {
        skill_md: '---\nname: contract-skill\ndescription: A minimal skill used by the contract test.\n---\n# Contract skill\n',
    },
});
/**
 * Packages a skill directory as an OCI artifact in the local store. `tag` defaults to the skill
 * name; the result is the tag, or the index digest when there is none.
 */
export const BuildSkill = operation({
    method: 'skills/build',
    summary: 'Build a skill',
    params: z.object({ path: AbsolutePath, tag: z.string().optional() }),
    result: z.object({ reference: z.string() }),
    rest: { verb: 'POST', path: '/api/v1beta/skills/build', status: 200 },
    errors: [400, 404, 500],
    example: { path: '/nonexistent/contract-skill' },
});
/**
 * Pushes a locally built artifact to its OCI registry, signed unless `no_sign` (`key` and
 * `identity_token` are mutually exclusive). 404 when the reference is not in the local store.
 */
export const PushSkill = operation({
    method: 'skills/push',
    summary: 'Push a skill',
    params: z
        .object({
        reference: requiredString('reference'),
        /** Path to a cosign private key. */
        key: z.string().optional(),
        /** Short-lived OIDC token for keyless signing. */
        identity_token: z.string().optional(),
        no_sign: z.boolean().optional(),
    })
        .refine((params) => !(params.key && params.identity_token), {
        message: 'key and identity_token are mutually exclusive',
        path: ['identity_token'],
    }),
    result: NoResult,
    rest: { verb: 'POST', path: '/api/v1beta/skills/push', status: 204, response: 'empty' },
    errors: [400, 401, 403, 404, 429, 500, 502, 504],
    example: { reference: 'ghcr.io/contract/missing:0.0.0', no_sign: true },
});
/** Lists skill artifacts built into the local OCI store. */
export const ListSkillBuilds = operation({
    method: 'skills/listBuilds',
    summary: 'List local skill builds',
    params: NoParams,
    result: z.object({ builds: z.array(SkillBuild) }),
    rest: { verb: 'GET', path: '/api/v1beta/skills/builds', status: 200 },
    errors: [500],
    example: {},
});
/** Deletes a local build by tag. */
export const DeleteSkillBuild = operation({
    method: 'skills/deleteBuild',
    summary: 'Delete a local skill build',
    params: z.object({ tag: requiredString('tag') }),
    result: NoResult,
    rest: { verb: 'DELETE', path: '/api/v1beta/skills/builds/{tag}', status: 204, response: 'empty' },
    errors: [400, 404, 500],
    example: { tag: 'contract-missing' },
});
/** Reads a skill by OCI reference, `git://` reference or local build tag, without installing it. */
export const GetSkillContent = operation({
    method: 'skills/content',
    summary: 'Get skill content',
    params: z.object({ ref: requiredString('ref query parameter') }),
    result: SkillContent,
    rest: { verb: 'GET', path: '/api/v1beta/skills/content', status: 200, query: ['ref'] },
    errors: [400, 401, 404, 409, 422, 429, 500, 502, 504],
    example: { ref: 'contract-missing' },
});
/**
 * Brings a project's installed skills in line with its lock file, at the pinned digests. `check`
 * only compares; `prune` removes skills not in the lock file; `adopt` records unmanaged installs.
 */
export const SyncSkills = operation({
    method: 'skills/sync',
    summary: 'Sync project skills from the lock file',
    params: z.object({
        project_root: AbsolutePath,
        clients: SkillClients.optional(),
        prune: z.boolean().optional(),
        check: z.boolean().optional(),
        adopt: z.boolean().optional(),
        /** Accepted for ToolHive compatibility and ignored: Hangar verifies no signatures. */
        allow_unsigned: z.boolean().optional(),
    }),
    result: SkillSyncResult,
    rest: { verb: 'POST', path: '/api/v1beta/skills/sync', status: 200 },
    errors: [400, 401, 403, 404, 429, 500, 502, 504],
    example: { project_root: '/nonexistent/contract-project', check: true },
});
/**
 * Re-resolves the sources in a project's lock file and upgrades changed skills. `preview` reports
 * without installing; reference changes are blocked unless explicitly allowed.
 */
export const UpgradeSkills = operation({
    method: 'skills/upgrade',
    summary: 'Upgrade project skills',
    params: z.object({
        project_root: AbsolutePath,
        /** Only these skills; empty means every lock entry. */
        names: z.array(SkillName).optional(),
        clients: SkillClients.optional(),
        preview: z.boolean().optional(),
        fail_on_changes: z.boolean().optional(),
        allow_ref_change: z.boolean().optional(),
        /** Accepted for ToolHive compatibility and ignored: there are no signers to change. */
        allow_signer_change: z.boolean().optional(),
    }),
    result: SkillUpgradeResult,
    rest: { verb: 'POST', path: '/api/v1beta/skills/upgrade', status: 200 },
    errors: [400, 401, 403, 404, 429, 500, 502, 504],
    example: { project_root: '/nonexistent/contract-project', preview: true },
});
/** Sent when a skill is installed, uninstalled or upgraded, by any door. */
export const SkillsDidChange = notification({
    method: 'skills/didChange',
    summary: 'A skill was installed, uninstalled or upgraded',
    params: z.object({
        name: z.string(),
        scope: Scope,
        project_root: z.string().optional(),
        change: z.enum(['installed', 'uninstalled', 'upgraded']),
    }),
});
//# sourceMappingURL=protocol.skills.js.map