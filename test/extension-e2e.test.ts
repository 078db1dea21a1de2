/**
 * The packaged extension in a real VS Code (code-server in headless Chromium): installed from
 * its `.vsix`, it opens a git project and runs "Hangar: Install Skill…" from the command
 * palette against a local OCI registry, answering its quick picks as a user does, and the
 * skill lands in the project's Claude Code skills folder. Screenshots go to test-results/.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishSkill } from './support/publish.js';
import { startRegistry, type Registry } from './support/registry.js';
import { skillMd } from './support/skills.js';
import {
	installExtension,
	missingCodeServer,
	notification,
	openBrowser,
	openWorkbench,
	quickInput,
	runCommand,
	startCodeServer,
	type CodeServer,
	type CodeServerOptions,
} from './support/code-server.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const VSIX = join(REPO, 'extension', 'hangar.vsix');
const SCREENSHOTS = join(REPO, 'test-results', 'extension-e2e');
const extensionVersion = JSON.parse(await readFile(join(REPO, 'extension', 'package.json'), 'utf8')).version as string;

const SKILL = 'e2e-skill';
const SKILL_FILES = { 'scripts/check.sh': '#!/bin/sh\necho checked\n' };

let root: string;
let project: string;
let registry: Registry;
let reference: string;
let options: CodeServerOptions;
let server: CodeServer;
let browser: Browser;
let page: Page;

async function screenshot(name: string): Promise<void> {
	await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

describe('the extension in VS Code', () => {
	beforeAll(async () => {
		const missing = missingCodeServer();
		if (missing) throw new Error(missing);
		await mkdir(SCREENSHOTS, { recursive: true });
		root = await mkdtemp(join(tmpdir(), 'hangar-e2e-'));
		project = join(root, 'demo-project');
		await mkdir(project);
		await run('git', ['init', '-q', project]);
		await run('npm', ['run', 'package'], { cwd: REPO, timeout: 240_000 });

		registry = await startRegistry();
		reference = await publishSkill(registry, root, SKILL, { files: SKILL_FILES });

		options = {
			root,
			env: { ...process.env, HANGAR_HOME: join(root, 'hangar'), HANGAR_LOG: 'info' },
			settings: {
				'security.workspace.trust.enabled': false,
				'workbench.startupEditor': 'none',
				'workbench.tips.enabled': false,
				'extensions.ignoreRecommendations': true,
				'telemetry.telemetryLevel': 'off',
				'chat.disableAIFeatures': true,
				'hangar.defaultScope': 'ask',
				'hangar.defaultClients': ['claude-code'],
			},
		};
		expect(await installExtension(options, VSIX)).toMatch(/successfully installed/);
		server = await startCodeServer(options, project);
		expect(await readdir(server.extensions)).toContain(`hangar.hangar-${extensionVersion}`);
		browser = await openBrowser(join(root, 'home'));
		page = await openWorkbench(browser, server, project);
	}, 600_000);

	afterAll(async () => {
		// What the editor looked like and logged at the end, pass or fail.
		if (page) await screenshot('last').catch(() => undefined);
		if (server) {
			await writeFile(join(SCREENSHOTS, 'code-server.log'), server.output());
			// The editor's logs, the Hangar output channel (the daemon's stderr) among them.
			await rm(join(SCREENSHOTS, 'logs'), { recursive: true, force: true });
			await cp(join(server.userData, 'logs'), join(SCREENSHOTS, 'logs'), { recursive: true }).catch(() => undefined);
		}
		await page?.close().catch(() => undefined);
		await browser?.close();
		await server?.stop();
		await registry?.stop();
		if (root) await rm(root, { recursive: true, force: true });
	});

	it('runs Hangar: Install Skill… from the palette into the project folder', async () => {
		await runCommand(page, 'Hangar: Install Skill…');
		const picker = quickInput(page);
		await picker.widget.locator('input[placeholder*="OCI reference"]').waitFor();
		await picker.rows.first().waitFor(); // the registry's skills, or why there are none
		await screenshot('1-install-skill-search');
		await picker.input.fill(reference);
		await picker.row('OCI reference').waitFor();
		await page.keyboard.press('Enter');

		// Where to: the project folder (project scope) or the user. Clients come from settings.
		await picker.row('User').waitFor();
		expect(await picker.rows.allTextContents()).toEqual([expect.stringContaining(basename(project)), expect.stringContaining('User')]);
		await screenshot('2-install-skill-scope');
		await picker.input.fill(basename(project));
		await page.keyboard.press('Enter');

		const done = notification(page, `Installed skill ${SKILL} into project ${basename(project)} for claude-code.`);
		await done.first().waitFor({ timeout: 120_000 });
		await screenshot('3-install-skill-done');

		const installed = join(project, '.claude', 'skills', SKILL);
		expect(await readFile(join(installed, 'SKILL.md'), 'utf8')).toBe(skillMd(SKILL));
		expect(await readFile(join(installed, 'scripts', 'check.sh'), 'utf8')).toBe(SKILL_FILES['scripts/check.sh']);
		expect(await readFile(join(project, 'hangar.lock.yaml'), 'utf8')).toContain(reference.split(':1.0.0')[0]);
	}, 300_000);

	it('lists the installed skill in the Skills view, under the project', async () => {
		await page.locator('.activitybar [aria-label="Hangar"]').first().click();
		const skills = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Skills' }) });
		const project = skills.locator('.monaco-list-row', { hasText: 'demo-project' });
		await project.waitFor();
		await skills.locator('.monaco-list-row', { hasText: SKILL }).waitFor({ timeout: 30_000 });
		await screenshot('4-skills-view');
	}, 120_000);
});
