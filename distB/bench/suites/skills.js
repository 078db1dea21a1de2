/**
 * Skill installs against their peers, measured in the same run on a local registry and a local
 * git host: a 20-file skill installed from a CNCF distribution registry (cold: nothing cached;
 * warm: the layer cached) next to `skopeo copy` of the same artifact plus `tar -xzf` of its
 * layer, and a git install next to `git clone --depth 1`. Hangar is timed as a fresh CLI process
 * (like the peers) and as a request to a running daemon (as an editor calls it).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryClient } from '../../server/oci/client.js';
import { SkillBuilds } from '../../server/skills/builds.js';
import { resolvePaths } from '../../server/store/paths.js';
import { freePort, HANGAR, peer, spawnHttp, spawnRpc } from '../processes.js';
import { median, ms, percentile, verdict } from '../stats.js';
const RUNS = 10;
const FILES = 20;
function time(command, args, env = process.env) {
    return new Promise((resolve, reject) => {
        const started = performance.now();
        const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
        let errors = '';
        child.stderr.on('data', (chunk) => (errors += chunk.toString()));
        child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${command} ${args.join(' ')} failed: ${errors}`))));
    });
}
async function samples(measure) {
    await measure(-1); // warm the file-system cache and the JIT of the peers
    const results = [];
    for (let run = 0; run < RUNS; run++)
        results.push(await measure(run));
    return results;
}
async function startRegistry(root) {
    const port = await freePort();
    writeFileSync(join(root, 'registry.yml'), `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(root, 'registry')}\nhttp:\n  addr: 127.0.0.1:${port}\n`);
    const child = spawn('docker-registry', ['serve', join(root, 'registry.yml')], { stdio: 'ignore' });
    for (let attempt = 0; attempt < 200; attempt++) {
        if ((await fetch(`http://127.0.0.1:${port}/v2/`).then((response) => response.status, () => 0)) === 200)
            break;
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { host: `127.0.0.1:${port}`, stop: () => child.kill() };
}
/** A skill folder of `FILES` files (SKILL.md and markdown references of a few KiB each). */
function writeSkillFolder(folder, name) {
    mkdirSync(join(folder, 'references'), { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), `---\nname: ${name}\ndescription: A ${FILES}-file skill for benchmarks.\nversion: 1.0.0\n---\n# ${name}\n`);
    for (let index = 1; index < FILES; index++) {
        writeFileSync(join(folder, 'references', `topic-${index}.md`), `# Topic ${index}\n\n${`Line ${index} of the reference text.\n`.repeat(120)}`);
    }
}
function hangarEnv(root, extra = {}) {
    const home = join(root, 'home');
    mkdirSync(home, { recursive: true });
    return { ...process.env, HANGAR_HOME: join(root, 'hangar'), HOME: home, HANGAR_LOG: 'error', DOCKER_CONFIG: root, ...extra };
}
/** skopeo copy into an OCI layout, then tar -xzf of the skill layer: what a peer does by hand. */
async function skopeoInstall(reference, layout, out) {
    const copy = await time('skopeo', ['copy', '--quiet', '--src-tls-verify=false', `docker://${reference}`, `oci:${layout}:skill`]);
    const started = performance.now();
    const [entry] = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')).manifests;
    const manifest = JSON.parse(readFileSync(join(layout, 'blobs/sha256', entry.digest.slice(7)), 'utf8'));
    const parse = performance.now() - started;
    mkdirSync(out, { recursive: true });
    const extract = await time('tar', ['-xzf', join(layout, 'blobs/sha256', manifest.layers[0].digest.slice(7)), '-C', out]);
    return copy + parse + extract;
}
async function ociInstalls(root) {
    const registry = await startRegistry(root);
    const reference = `${registry.host}/skills/bench-skill:1.0.0`;
    writeSkillFolder(join(root, 'src', 'bench-skill'), 'bench-skill');
    const builds = new SkillBuilds(resolvePaths({ HANGAR_HOME: join(root, 'publisher') }));
    await builds.build(join(root, 'src', 'bench-skill'), reference);
    await builds.push(new RegistryClient({ env: { DOCKER_CONFIG: root } }), reference, new AbortController().signal);
    const skopeoCold = await samples((run) => {
        const layout = join(root, `skopeo-cold-${run}`);
        return skopeoInstall(reference, layout, join(root, `skopeo-cold-out-${run}`));
    });
    const skopeoWarm = await samples((run) => skopeoInstall(reference, join(root, 'skopeo-warm'), join(root, `skopeo-warm-out-${run}`)));
    const install = ['skill', 'install', reference, '-c', 'claude-code'];
    const cliCold = await samples((run) => time(process.execPath, [HANGAR, ...install], hangarEnv(join(root, `cli-cold-${run}`))));
    const warmEnv = hangarEnv(join(root, 'cli-warm'));
    await time(process.execPath, [HANGAR, ...install], warmEnv); // fills the cache
    const cliWarm = await samples(async () => {
        execFileSync(process.execPath, [HANGAR, 'skill', 'rm', 'bench-skill'], { env: warmEnv, stdio: 'ignore' });
        return time(process.execPath, [HANGAR, ...install], warmEnv);
    });
    const daemonEnv = hangarEnv(join(root, 'daemon'));
    const daemon = spawnRpc([HANGAR, 'daemon'], daemonEnv);
    await daemon.connection.sendRequest('initialize', { processId: process.pid, capabilities: {} });
    const params = { name: reference, clients: ['claude-code'] };
    const viaDaemon = async (cold) => {
        await daemon.connection.sendRequest('skills/uninstall', { name: 'bench-skill' }).catch(() => undefined);
        if (cold)
            rmSync(join(daemonEnv.HANGAR_HOME, 'cache'), { recursive: true, force: true });
        const started = performance.now();
        await daemon.connection.sendRequest('skills/install', params);
        return performance.now() - started;
    };
    const daemonCold = await samples(() => viaDaemon(true));
    const daemonWarm = await samples(() => viaDaemon(false));
    await daemon.stop();
    registry.stop();
    const peerCold = median(skopeoCold);
    const peerWarm = median(skopeoWarm);
    return {
        title: `Install a ${FILES}-file skill from a local registry (median of ${RUNS})`,
        columns: ['how', 'cold median', 'cold p90', 'warm median', 'warm p90'],
        rows: [
            ['skopeo copy + tar -xzf (peer)', ms(peerCold), ms(percentile(skopeoCold, 90)), ms(peerWarm), ms(percentile(skopeoWarm, 90))],
            ['hangar skill install (CLI process)', ms(median(cliCold)), ms(percentile(cliCold, 90)), ms(median(cliWarm)), ms(percentile(cliWarm, 90))],
            ['skills/install to a running daemon', ms(median(daemonCold)), ms(percentile(daemonCold, 90)), ms(median(daemonWarm)), ms(percentile(daemonWarm, 90))],
        ],
        verdicts: [
            verdict('CLI cold vs skopeo + tar', median(cliCold) / peerCold, 1.2),
            verdict('CLI warm vs skopeo + tar', median(cliWarm) / peerWarm, 1.2),
            verdict('daemon cold vs skopeo + tar', median(daemonCold) / peerCold, 1.2),
            verdict('daemon warm vs skopeo + tar', median(daemonWarm) / peerWarm, 1.2),
        ],
    };
}
async function gitInstalls(root) {
    const repos = join(root, 'repos');
    const work = join(root, 'git-work');
    mkdirSync(join(repos, 'org'), { recursive: true });
    const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' } });
    git(root, 'init', '-q', '--bare', '-b', 'main', join(repos, 'org', 'bench-skill.git'));
    git(join(repos, 'org', 'bench-skill.git'), 'config', 'uploadpack.allowFilter', 'true');
    writeSkillFolder(work, 'bench-skill');
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'add', '.');
    git(work, 'commit', '-q', '-m', 'skill');
    git(work, 'tag', '-a', 'v1', '-m', 'v1');
    git(work, 'push', '-q', join(repos, 'org', 'bench-skill.git'), 'main', 'v1');
    const server = await spawnHttp([peer('git-http'), repos]);
    const url = `${server.url}/org/bench-skill`;
    const clone = await samples((run) => time('git', ['clone', '-q', '--depth', '1', '--branch', 'v1', url, join(root, `clone-${run}`)]));
    const reference = `git://${new URL(server.url).host}/org/bench-skill@v1`;
    const cliEnv = hangarEnv(join(root, 'git-cli'), { HANGAR_DEV: '1' });
    await time(process.execPath, [HANGAR, 'skill', 'install', reference, '-c', 'claude-code'], cliEnv);
    const cli = await samples(async () => {
        execFileSync(process.execPath, [HANGAR, 'skill', 'rm', 'bench-skill'], { env: cliEnv, stdio: 'ignore' });
        return time(process.execPath, [HANGAR, 'skill', 'install', reference, '-c', 'claude-code'], cliEnv);
    });
    const daemonEnv = hangarEnv(join(root, 'git-daemon'), { HANGAR_DEV: '1' });
    const daemon = spawnRpc([HANGAR, 'daemon'], daemonEnv);
    await daemon.connection.sendRequest('initialize', { processId: process.pid, capabilities: {} });
    const viaDaemon = await samples(async () => {
        await daemon.connection.sendRequest('skills/uninstall', { name: 'bench-skill' }).catch(() => undefined);
        const started = performance.now();
        await daemon.connection.sendRequest('skills/install', { name: reference, clients: ['claude-code'] });
        return performance.now() - started;
    });
    await daemon.stop();
    server.stop();
    const peerMedian = median(clone);
    return {
        title: `Install a ${FILES}-file skill from a git host over smart HTTP (median of ${RUNS})`,
        columns: ['how', 'median', 'p90'],
        rows: [
            ['git clone --depth 1 --branch v1 (peer)', ms(peerMedian), ms(percentile(clone, 90))],
            ['hangar skill install git://… (CLI process)', ms(median(cli)), ms(percentile(cli, 90))],
            ['skills/install git://… to a running daemon', ms(median(viaDaemon)), ms(percentile(viaDaemon, 90))],
        ],
        verdicts: [verdict('CLI vs git clone --depth 1', median(cli) / peerMedian, 1.2), verdict('daemon vs git clone --depth 1', median(viaDaemon) / peerMedian, 1.2)],
    };
}
export async function skills() {
    const root = mkdtempSync(join(tmpdir(), 'hangar-bench-skills-'));
    try {
        return [await ociInstalls(root), await gitInstalls(root)];
    }
    finally {
        rmSync(root, { recursive: true, force: true });
    }
}
//# sourceMappingURL=skills.js.map