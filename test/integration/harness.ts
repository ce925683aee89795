// Runs extension code inside a real VS Code (code-server) driven by Debian's Chromium through playwright-core.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  cleanEnv,
  ensureCodeServer,
  node24,
  remoteUri,
  startCodeServer,
  workbenchUrl,
  type RunningCodeServer,
} from '../../scripts/codeServer.ts';
import { hostTarget, platformVsix } from '../../scripts/vsixTargets.ts';

const CHROMIUM = process.env.SPRINGFIELD_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * CSS animations off in every page and frame. A spinning icon or a running progress bar keeps
 * Chromium's software compositor drawing whole frames for as long as it shows, on cores the tests
 * share (docs/development.md, "`npm test` and the tiers"). What shows, and every class, stays as it is.
 */
const STILL_FRAMES = `document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '*, *::before, *::after { animation: none !important; }';
  document.head.append(style);
});`;

/**
 * Bounds for a stuck editor, never a verdict on the machine's speed: on 0.7 of a core
 * (scripts/cpuQuota.sh) the in-host suite took 170 s, and the workbench, extensions and views
 * took well past Playwright's defaults.
 */
const SUITE_TIMEOUT_MS = 480_000;
const WORKBENCH_TIMEOUT_MS = 180_000;

export interface SuiteOptions {
  /** Folder holding the extension's package.json. */
  extensionPath: string;
  /** File exporting `run(): Promise<void>` (CommonJS, or ESM when `.mjs` / inside a `"type": "module"` extension). */
  suitePath: string;
  workspace: string;
  timeoutMs?: number;
  /** Environment for code-server and so the extension host (e.g. XDG_STATE_HOME shared with the CLI). */
  env?: NodeJS.ProcessEnv;
  /** User settings on top of the quiet defaults. */
  settings?: Record<string, unknown>;
  /** The remote's settings (code-server's Machine settings). */
  machineSettings?: Record<string, unknown>;
}

export interface SuiteResult {
  /** 0 when `run()` resolved, non-zero when it rejected or the test runner could not load. */
  code: number;
  /** Browser console lines (extension host console output shows up here) and workbench log lines. */
  logs: string[];
}

export interface EditorSession {
  page: Page;
  url: string;
  /** What the remote extension host logged so far. */
  extensionHostLog(): string;
  /** code-server's own folder (settings, logs, sockets); close() removes it. */
  serverHome: string;
  close(): Promise<void>;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(width = 1400, height = 900): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'springfield-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width, height },
      // Chromium's crash reporter writes under $XDG_CONFIG_HOME, not the profile: keep it in the temp dir.
      env: cleanEnv({ XDG_CONFIG_HOME: join(profile, 'xdg-config'), XDG_CACHE_HOME: join(profile, 'xdg-cache') }),
    });
    await context.addInitScript({ content: STILL_FRAMES });
    const page = context.pages()[0] ?? (await context.newPage());
    const close = async (): Promise<void> => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    };
    return { context, page, close };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Bundles test/integration/suite/<name>.suite.ts for the extension host into `outDir`, with `fixture`
 * baked in as SUITE_FIXTURE (the suite's paths and ids); returns the bundle, runExtensionSuite's `suitePath`.
 */
export async function bundleSuite(name: string, fixture: unknown, outDir: string): Promise<string> {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const outfile = join(outDir, `${name}.suite.cjs`);
  await build({
    entryPoints: [join(root, 'test', 'integration', 'suite', `${name}.suite.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    define: { SUITE_FIXTURE: JSON.stringify(JSON.stringify(fixture)) },
    logLevel: 'silent',
  });
  return outfile;
}

/** Runs `suitePath` in the remote extension host with `extensionPath` under development; always stops code-server and Chromium. */
export async function runExtensionSuite(options: SuiteOptions): Promise<SuiteResult> {
  const timeoutMs = options.timeoutMs ?? SUITE_TIMEOUT_MS;
  const logs: string[] = [];
  let server: RunningCodeServer | undefined;
  let browser: Browser | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    server = await startCodeServer({
      folder: options.workspace,
      smokeTestDriver: true,
      ...(options.env ? { env: options.env } : {}),
      ...(options.settings ? { settings: options.settings } : {}),
      ...(options.machineSettings ? { machineSettings: options.machineSettings } : {}),
    });
    browser = await launchBrowser();
    const { page } = browser;
    // Workbench log lines (extension host console output among them) arrive through codeAutomationLog;
    // their '%c'-styled console copies are skipped.
    page.on('console', (message) => {
      if (!message.text().startsWith('%c')) logs.push(`[console.${message.type()}] ${message.text()}`);
    });
    page.on('pageerror', (error) => logs.push(`[pageerror] ${error.message}`));
    let onExit: (code: number) => void = () => undefined;
    const exited = new Promise<number>((resolve) => {
      onExit = resolve;
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => onExit(code));
    await page.exposeFunction('codeAutomationLog', (level: string, message: string) =>
      logs.push(`[workbench.${level}] ${message}`),
    );
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`extension suite did not finish within ${timeoutMs} ms\n${tail(logs)}`)),
        timeoutMs,
      );
    });
    const url = workbenchUrl(server.port, options.workspace, [
      ['extensionDevelopmentPath', remoteUri(server.port, options.extensionPath)],
      ['extensionTestsPath', remoteUri(server.port, options.suitePath)],
      ['skipWelcome', 'true'],
    ]);
    // Only the page's arrival is awaited: the suite's own deadline above bounds the rest (see openWorkbench).
    await page.goto(url, { waitUntil: 'commit', timeout: timeoutMs });
    const code = await Promise.race([exited, timedOut]);
    return { code, logs };
  } finally {
    clearTimeout(timer);
    await browser?.close();
    await server?.stop();
  }
}

/**
 * Opens the workbench at `workspace` for UI tests, with the extension installed as a person has it
 * (linked from `extensionPath`, or in `extensionsDir`; no test driver: notifications show as toasts). `env` goes to
 * code-server and so the extension host (e.g. XDG_STATE_HOME shared with the CLI).
 */
export async function openEditor(options: {
  /** The extension's folder, linked into the extensions folder (a development build)… */
  extensionPath?: string;
  /** …or an extensions folder it is installed in (installPlatformVsix). */
  extensionsDir?: string;
  workspace: string;
  theme?: 'dark' | 'light';
  width?: number;
  height?: number;
  env?: NodeJS.ProcessEnv;
  settings?: Record<string, unknown>;
}): Promise<EditorSession> {
  const settings = {
    ...(options.theme
      ? { 'workbench.colorTheme': options.theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern' }
      : {}),
    ...options.settings,
  };
  const server = await startCodeServer({
    folder: options.workspace,
    ...(options.extensionPath ? { installedExtensionPath: options.extensionPath } : {}),
    ...(options.extensionsDir ? { extensionsDir: options.extensionsDir } : {}),
    settings,
    ...(options.env ? { env: options.env } : {}),
  });
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser(options.width, options.height);
    const { page } = browser;
    await openWorkbench(page, server.url);
    const opened = browser;
    return {
      page,
      url: server.url,
      extensionHostLog: () => server.extensionHostLog(),
      serverHome: server.home,
      close: async () => {
        await opened.close();
        await server.stop();
      },
    };
  } catch (error) {
    await browser?.close();
    await server.stop();
    throw error;
  }
}

/**
 * Goes to the workbench and waits until it shows. The page's `load` event waits for every script of the
 * workbench; on a busy machine that took more than Playwright's default 30 s for `goto` (a CI run here),
 * so only the document's arrival is awaited, and the one bound is on what a person waits for: the workbench.
 */
export async function openWorkbench(page: Page, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'commit', timeout: WORKBENCH_TIMEOUT_MS });
  await workbenchShows(page);
}

/** Waits for a window that went to `folder` (Open here, Open in new window) to show its workbench. */
export async function workbenchOpensAt(page: Page, folder: string): Promise<void> {
  await page.waitForURL((url) => url.searchParams.get('folder') === folder, {
    waitUntil: 'commit',
    timeout: WORKBENCH_TIMEOUT_MS,
  });
  await workbenchShows(page);
}

async function workbenchShows(page: Page): Promise<void> {
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: WORKBENCH_TIMEOUT_MS });
}

function tail(lines: string[], count = 40): string {
  return lines.slice(-count).join('\n');
}

/**
 * Clicks Springfield's activity-bar icon as a person would. The click goes to the icon's list item:
 * its badge (plans and signals waiting) sits over the icon's centre and would intercept a click on
 * the icon itself.
 */
export async function clickSpringfieldIcon(page: Page, timeout = WORKBENCH_TIMEOUT_MS): Promise<void> {
  await page.locator('.activitybar li.action-item:has(> [aria-label^="Springfield"])').first().click({ timeout });
}

/** This machine's VSIX, installed as the Marketplace or Open VSX would install it (installPlatformVsix). */
export interface InstalledVsix {
  readonly target: string;
  /** The extensions folder it is installed in: start code-server with it (openEditor's `extensionsDir`). */
  readonly extensionsDir: string;
  /** What `--install-extension` printed. */
  readonly output: string;
}

/**
 * Builds this machine's platform VSIX with `npm run package`'s script (scripts/package.ts --target,
 * no bypass) under `work`, and installs it with code-server's `--install-extension` into an
 * extensions folder of its own there. Null where no VSIX is built for this platform.
 */
export async function installPlatformVsix(work: string): Promise<InstalledVsix | null> {
  const target = hostTarget();
  if (!target) return null;
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  execFileSync(process.execPath, [join(root, 'scripts', 'package.ts'), '--target', target, '--out', work], {
    cwd: root,
    stdio: 'pipe',
  });
  const extensionsDir = join(work, 'extensions');
  const home = join(work, 'install-home');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.yaml'), 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  const entry = await ensureCodeServer();
  const output = execFileSync(
    node24(),
    [
      entry,
      '--config',
      join(home, 'config.yaml'),
      '--user-data-dir',
      join(home, 'data'),
      '--extensions-dir',
      extensionsDir,
      '--install-extension',
      platformVsix(work, target),
    ],
    { encoding: 'utf8', env: cleanEnv({ XDG_DATA_HOME: join(home, 'xdg'), XDG_CONFIG_HOME: join(home, 'xdg') }) },
  );
  return { target, extensionsDir, output };
}
