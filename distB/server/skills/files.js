/**
 * The files of a skill folder, in packaging order: `SKILL.md` first, then every other regular
 * file sorted by path. Hidden files and folders (a name starting with `.`) are not part of a
 * skill; symlinks and special files are problems, never followed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
export const SKILL_FILE = 'SKILL.md';
/** Files a skill may hold (ToolHive's packaging and extraction limit). */
export const MAX_SKILL_FILES = 1000;
/** Bytes a packaged skill may hold in all (ToolHive's packaging limit). */
export const MAX_PACKAGED_BYTES = 95 * 1024 * 1024;
export async function readSkillTree(root) {
    const files = [];
    const unsupported = [];
    const hidden = [];
    let truncated = false;
    const walk = async (folder, prefix) => {
        const entries = (await readdir(folder, { withFileTypes: true })).sort((a, b) => compareBytes(a.name, b.name));
        for (const entry of entries) {
            if (truncated)
                return;
            const path = prefix + entry.name;
            if (entry.name.startsWith('.')) {
                hidden.push(path);
            }
            else if (entry.isDirectory()) {
                await walk(join(folder, entry.name), `${path}/`);
            }
            else if (entry.isFile()) {
                const absolute = join(folder, entry.name);
                const stats = await lstat(absolute);
                files.push({ path, absolute, size: stats.size, executable: (stats.mode & 0o111) !== 0 });
                if (files.length > MAX_SKILL_FILES)
                    truncated = true;
            }
            else {
                unsupported.push(path);
            }
        }
    };
    await walk(root, '');
    const skill = files.findIndex((file) => file.path === SKILL_FILE);
    if (skill > 0)
        files.unshift(...files.splice(skill, 1));
    return { files, unsupported, hidden, truncated };
}
/** Byte order of UTF-8 paths, as Go's sort.Strings orders them (not locale order). */
export function compareBytes(a, b) {
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
export async function sha256File(path) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path))
        hash.update(chunk);
    return hash.digest('hex');
}
/**
 * Digest of a skill's materialised files, independent of how they were packaged: sha256 of
 * the lines `<sha256 of file>  <path>\n` (`<sha256> 755 <path>\n` for an executable file),
 * sorted by path. The lock file records it so a sync can tell a folder that drifted from the
 * pinned content, execute bits included. Files not known to be executable or not are looked at.
 */
export async function contentDigest(files) {
    const lines = await Promise.all([...files]
        .sort((a, b) => compareBytes(a.path, b.path))
        .map(async (file) => {
        const executable = file.executable ?? ((await stat(file.absolute)).mode & 0o111) !== 0;
        return `${file.sha256 ?? (await sha256File(file.absolute))}${executable ? ' 755 ' : '  '}${file.path}\n`;
    }));
    return `sha256:${createHash('sha256').update(lines.join('')).digest('hex')}`;
}
//# sourceMappingURL=files.js.map