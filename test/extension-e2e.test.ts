/**
 * The packaged extension in a real VS Code (code-server in headless Chromium): installed from
 * its `.vsix`, it opens a git project and runs "Hangar: Install Skill…" from the command
 * palette, answering its quick picks as a user does. Screenshots go to test-results/.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

let root: string;
let project: string;
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
		if (server) await writeFile(join(SCREENSHOTS, 'code-server.log'), server.output());
		await page?.close().catch(() => undefined);
		await browser?.close();
		await server?.stop();
		if (root) await rm(root, { recursive: true, force: true });
	});

	it('runs Hangar: Install Skill… from the palette into the project folder', async () => {
		const reference = '127.0.0.1:5000/skills/e2e-skill:1.0.0';
		await runCommand(page, 'Hangar: Install Skill…');
		const picker = quickInput(page);
		await picker.widget.locator('input[placeholder*="OCI reference"]').waitFor();
		await picker.rows.first().waitFor(); // the registry's skills, or why there are none
		await screenshot('1-install-skill-search');
		await picker.input.fill(reference);
		await picker.row('OCI reference').waitFor();
		await page.keyboard.press('Enter');

		// Where to: the project folder (project scope) or the user.
		await picker.row('User').waitFor();
		expect(await picker.rows.allTextContents()).toEqual([expect.stringContaining(basename(project)), expect.stringContaining('User')]);
		await screenshot('2-install-skill-scope');
		await picker.input.fill(basename(project));
		await page.keyboard.press('Enter');

		const outcome = notification(page, /e2e-skill/);
		await outcome.first().waitFor({ timeout: 120_000 });
		await screenshot('3-install-skill-done');
		expect(await outcome.first().textContent()).toMatch(/Cannot install skill .*e2e-skill.* yet/);
	}, 300_000);
});
