/**
 * `SKILL.md`: YAML frontmatter between `---` lines, then a free Markdown body.
 *
 * The frontmatter is read with YAML's failsafe schema, so every scalar stays the text the
 * author wrote (`version: 1.10` is "1.10", not 1.1). Checking the fields against the Agent
 * Skills rules is the validator's job; this module only splits, parses and normalises.
 */
/** Frontmatter larger than this is refused before YAML sees it (ToolHive's limit). */
export const MAX_FRONTMATTER_BYTES = 64 * 1024;
/** `toolhive.requires` entries a skill may list (ToolHive's limit). */
export const MAX_DEPENDENCIES = 100;
export async function parseSkillDocument(text) {
    const content = text.replace(/^\uFEFF/, '').trimStart();
    const opening = /^---[ \t]*\r?\n/.exec(content);
    if (!opening)
        return { ok: false, error: 'invalid frontmatter: SKILL.md must start with a "---" line' };
    const rest = content.slice(opening[0].length);
    const closing = /^---[ \t]*(\r?\n|$)/m.exec(rest);
    if (!closing || Buffer.byteLength(rest.slice(0, closing.index)) > MAX_FRONTMATTER_BYTES) {
        return {
            ok: false,
            error: `invalid frontmatter: no closing "---" line within ${MAX_FRONTMATTER_BYTES / 1024} KiB`,
        };
    }
    const { parse } = await import('yaml');
    let frontmatter;
    try {
        frontmatter = parse(rest.slice(0, closing.index), { schema: 'failsafe', maxAliasCount: 50, uniqueKeys: true }) ?? {};
    }
    catch (error) {
        return { ok: false, error: `invalid frontmatter: ${error.message.split('\n')[0]}` };
    }
    if (typeof frontmatter !== 'object' || frontmatter === null || Array.isArray(frontmatter)) {
        return { ok: false, error: 'invalid frontmatter: expected a map of fields' };
    }
    return {
        ok: true,
        document: {
            frontmatter: frontmatter,
            body: rest.slice(closing.index + closing[0].length),
        },
    };
}
const text = (value) => (typeof value === 'string' ? value : undefined);
export function skillFields(frontmatter) {
    const metadata = {};
    const rawMetadata = frontmatter.metadata;
    if (typeof rawMetadata === 'object' && rawMetadata !== null && !Array.isArray(rawMetadata)) {
        for (const [key, value] of Object.entries(rawMetadata))
            if (typeof value === 'string')
                metadata[key] = value;
    }
    return {
        name: text(frontmatter.name),
        description: text(frontmatter.description),
        version: text(frontmatter.version),
        license: text(frontmatter.license),
        compatibility: text(frontmatter.compatibility),
        allowedTools: toolList(frontmatter['allowed-tools']),
        // The architecture notes put it at the top level; ToolHive's packer reads it from metadata.
        requires: referenceList(frontmatter['toolhive.requires'] ?? rawMetadataValue(rawMetadata, 'toolhive.requires')),
        metadata,
    };
}
function rawMetadataValue(metadata, key) {
    return typeof metadata === 'object' && metadata !== null ? metadata[key] : undefined;
}
/** `allowed-tools`: a YAML list, or a string split on commas when it has any, else on spaces. */
export function toolList(value) {
    if (Array.isArray(value))
        return value.filter((item) => typeof item === 'string' && item.trim() !== '');
    if (typeof value !== 'string')
        return [];
    return value
        .split(value.includes(',') ? ',' : /\s+/)
        .map((tool) => tool.trim())
        .filter(Boolean);
}
/** `toolhive.requires`: a YAML list or a string of references separated by newlines or spaces. */
export function referenceList(value) {
    const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/) : [];
    return items.filter((item) => typeof item === 'string').map((item) => item.trim()).filter(Boolean);
}
//# sourceMappingURL=frontmatter.js.map