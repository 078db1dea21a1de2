/**
 * A real VS Code for the extension's end-to-end test: code-server (installed by
 * scripts/test-services.sh into a cache outside the repo, with its own Node 24) opened in
 * Debian's Chromium through playwright-core, plus helpers to work it as a user does.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';

const CODE_SERVER_VERSION = '4.139.1';
const CACHE = join(process.env.HANGAR_TEST_CACHE ?? join(homedir(), '.cache', 'hangar-test'), 'code-server');
const NODE = join(CACHE, 'node', 'package', 'bin', 'node');
const ENTRY = join(CACHE, 'app', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const CHROMIUM = '/usr/bin/chromium';

/** Why the end-to-end test cannot run here, or undefined when it can. */
export function missingCodeServer(): string | undefined {
	if (!existsSync(join(CACHE, `ready-${CODE_SERVER_VERSION}`))) return `code-server ${CODE_SERVER_VERSION} is not installed in ${CACHE}; run scripts/test-services.sh`;
	if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing; run scripts/test-services.sh`;
	return undefined;
}

export interface CodeServerOptions {
	/** Holds `user-data`, `extensions` and the fake home of the editor. */
	readonly root: string;
	/** User settings written before the editor starts. */
	readonly settings: Record<string, unknown>;
	/** Environment of the editor, so of the extension host and the daemon it spawns. */
	readonly env: NodeJS.ProcessEnv;
}

export interface CodeServer {
	readonly url: string;
	readonly userData: string;
	readonly extensions: string;
	/** Everything code-server wrote. */
	output(): string;
	stop(): Promise<void>;
}

function paths(root: string) {
	return { userData: join(root, 'user-data'), extensions: join(root, 'extensions'), home: join(root, 'home') };
}

/** `code-server --install-extension`, as a user installs a `.vsix`. */
export async function installExtension(options: CodeServerOptions, vsix: string): Promise<string> {
	const { userData, extensions, home } = paths(options.root);
	await mkdir(home, { recursive: true });
	const { stdout } = await promisify(execFile)(
		NODE,
		[ENTRY, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix],
		{ env: { ...options.env, HOME: home }, timeout: 120_000 },
	);
	return stdout;
}

/** code-server opening `folder` (a folder or a `.code-workspace` file) by default. */
export async function startCodeServer(options: CodeServerOptions, folder: string): Promise<CodeServer> {
	const { userData, extensions, home } = paths(options.root);
	await mkdir(join(userData, 'User'), { recursive: true });
	await mkdir(home, { recursive: true });
	await writeFile(join(userData, 'User', 'settings.json'), JSON.stringify(options.settings, null, '\t'));
	const child: ChildProcess = spawn(
		NODE,
		[
			ENTRY,
			'--bind-addr',
			'127.0.0.1:0',
			'--auth',
			'none',
			'--user-data-dir',
			userData,
			'--extensions-dir',
			extensions,
			'--disable-telemetry',
			'--disable-update-check',
			'--disable-workspace-trust',
			folder,
		],
		// Its own process group, so stopping it ends the extension host and the daemon too.
		{ env: { ...options.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
	);
	let output = '';
	const collect = (chunk: Buffer) => (output += chunk.toString());
	child.stdout!.on('data', collect);
	child.stderr!.on('data', collect);
	const url = await new Promise<string>((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${output}`)), 60_000);
		const look = () => {
			const match = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
			if (match) {
				clearTimeout(timer);
				resolve(match[1]!);
			}
		};
		child.stdout!.on('data', look);
		child.stderr!.on('data', look);
		child.once('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${output}`)));
	});
	return {
		url,
		userData,
		extensions,
		output: () => output,
		stop: async () => {
			if (child.exitCode !== null) return;
			const exited = new Promise((resolve) => child.once('exit', resolve));
			process.kill(-child.pid!, 'SIGTERM');
			const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
			await exited;
			clearTimeout(timer);
		},
	};
}

export async function openBrowser(home: string): Promise<Browser> {
	return chromium.launch({
		executablePath: CHROMIUM,
		env: { ...process.env, HOME: home },
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
}

/** The workbench of a folder or a `.code-workspace` file, loaded and idle. */
export async function openWorkbench(browser: Browser, server: CodeServer, open: { folder: string } | { workspace: string }): Promise<Page> {
	const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
	// A busy machine may take long to render: waits are generous rather than tight.
	page.setDefaultTimeout(90_000);
	const [kind, path] = 'folder' in open ? ['folder', open.folder] : ['workspace', open.workspace];
	await page.goto(`${server.url}/?${kind}=${encodeURIComponent(path)}`);
	await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
	await page.locator('.statusbar').waitFor({ timeout: 90_000 });
	return page;
}

/** The quick input (command palette, quick picks, input boxes). */
export function quickInput(page: Page) {
	const widget = page.locator('.quick-input-widget');
	return {
		widget,
		input: widget.locator('input.input'),
		rows: widget.locator('.quick-input-list .monaco-list-row'),
		/** Waits for the widget to show a row containing `text`. */
		row: (text: string | RegExp) => widget.locator('.quick-input-list .monaco-list-row', { hasText: text }),
	};
}

/**
 * Runs a command from the palette by its title, as a user does. Contributed commands reach
 * the palette once the extension host has started, a while after the workbench shows: until
 * then the palette is closed and opened again.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 90_000): Promise<void> {
	const { widget, input, row } = quickInput(page);
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		await page.keyboard.press('Control+Shift+P');
		await widget.waitFor({ state: 'visible' });
		await input.fill(`>${title}`);
		try {
			await row(title).first().waitFor({ timeout: 5_000 });
			break;
		} catch (error) {
			if (Date.now() > deadline) throw error;
			await page.keyboard.press('Escape');
		}
	}
	await page.keyboard.press('Enter');
}

/** A notification toast whose text matches. */
export function notification(page: Page, text: string | RegExp) {
	return page.locator('.notifications-toasts .notification-toast', { hasText: text });
}
