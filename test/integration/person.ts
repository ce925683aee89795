// What the person-level tests share: the CLI with another process's environment, sidebar rows, webviews,
// toasts and screenshots under test-results/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import { cleanEnv } from '../../scripts/codeServer.ts';
import { runCliSync } from '../helpers/cliSync.ts';
import { clickSpringfieldIcon } from './harness.ts';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The CLI's --json answer, run in this process (test/helpers/cliSync.ts: each start of the built CLI
 * cost about 0.24 s of CPU) with the environment another process would get: editor variables
 * stripped, `env` added. Throws with its stderr when it fails, as a spawned run would.
 */
export function cli<T>(cwd: string, args: string[], agent = '', env: NodeJS.ProcessEnv = {}): T {
  return answer<T>(cwd, args, cleanEnv({ SPRINGFIELD_AGENT: agent, ...env }));
}

/** scripts/demoRepo.ts's `sf` (the environment as given, added to this process's), run in this process. */
export function sfHere(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  return answer<Record<string, unknown>>(cwd, args, { ...process.env, ...env });
}

function answer<T>(cwd: string, args: string[], env: NodeJS.ProcessEnv): T {
  const ran = runCliSync(cwd, [...args, '--json'], env, 300_000);
  if (ran.code !== 0) throw new Error(`springfield ${args.join(' ')} in ${cwd}: exit ${ran.code}\n${ran.stderr}`);
  return JSON.parse(ran.stdout) as T;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: cleanEnv() }).trim();
}

/**
 * The bound on a wait for what the editor shows after an action: long enough that only a hang reaches
 * it. On a saturated machine (a fresh clone's `npm test` beside the other tiers) the extension host's
 * answer can take many seconds; a test's verdict must not depend on that (docs/development.md).
 */
export const UI_MS = 60_000;

/** Moves the pointer to an empty spot of the title bar, where it rests on nothing that shows a hover card. */
export async function parkPointer(page: Page): Promise<void> {
  await page.mouse.move(1200, 17);
}

/** Saves a screenshot of the page into test-results/<name>.png (the mouse parked where it shows no hover card). */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(root, 'test-results', `${name}.png`);
  mkdirSync(dirname(path), { recursive: true });
  await parkPointer(page);
  await page.waitForTimeout(300);
  await page.screenshot({ path });
  assert.ok(statSync(path).size > 10_000, `${path} written`);
  return path;
}

/**
 * Moves the pointer off the sidebar, as a person's hand leaves what it rested on, and waits for a row's
 * hover card to go. VS Code shows a tree item's tooltip under a pointer resting on its row, placed over
 * the rows below it; there it takes the next click, and Playwright retries that click until its timeout
 * with the pointer still resting (a fresh-clone run failed so). Escape closes a card that stays.
 */
export async function leaveHover(page: Page): Promise<void> {
  await parkPointer(page);
  const card = page.locator('.context-view .workbench-hover-container').first();
  if (await card.isVisible()) {
    await card.waitFor({ state: 'hidden', timeout: 3000 }).catch(() => page.keyboard.press('Escape'));
  }
}

/**
 * Right-clicks `target`. A hover card can come up over it even after leaveHover, when the tree refreshes
 * and another row moves under the pointer Playwright has just moved (a fresh-clone run failed so: the
 * card of the row above took the right-click until the timeout, the pointer resting under it). So each
 * try is short, and between tries the pointer leaves and the card goes; `timeout` bounds them all.
 */
async function rightClick(page: Page, target: Locator, timeout: number): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      await target.click({ button: 'right', timeout: Math.min(5_000, timeout) });
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await leaveHover(page);
    }
  }
}

/** Clicks a sidebar row, or a part of one (its twistie, its checkbox): `leaveHover` first, so no hover card left showing takes the click. */
export async function clickRow(page: Page, target: Locator, timeout = UI_MS): Promise<void> {
  await leaveHover(page);
  await target.click({ timeout });
}

/** A row of the Springfield sidebar whose accessible label starts with `label`. */
export function row(page: Page, label: string): Locator {
  return page.locator(`.part.sidebar .monaco-list-row[aria-label^=${JSON.stringify(label)}]`);
}

type InPage = { document: { querySelectorAll(s: string): Iterable<{ getAttribute(n: string): string | null }> } };

/** The aria-labels of every sidebar row (a row's label and description, as a screen reader reads them). */
export async function rowLabels(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...(globalThis as unknown as InPage).document.querySelectorAll('.part.sidebar .monaco-list-row')].map(
      (r) => r.getAttribute('aria-label') ?? '',
    ),
  );
}

/** Waits until a sidebar row starting with `label` includes every fragment; fails naming the rows shown. */
export async function rowShows(page: Page, label: string, fragments: string[], timeout = UI_MS): Promise<void> {
  await page
    .waitForFunction(
      ([l, f]) =>
        [...(globalThis as unknown as InPage).document.querySelectorAll('.part.sidebar .monaco-list-row')]
          .map((r) => r.getAttribute('aria-label') ?? '')
          .some((text) => text.startsWith(l) && f.every((x) => text.includes(x))),
      [label, fragments] as const,
      { polling: 'raf', timeout },
    )
    .catch(async () =>
      assert.fail(
        `no row "${label}" saying ${JSON.stringify(fragments)} within ${timeout} ms; rows: ${JSON.stringify(await rowLabels(page))}`,
      ),
    );
}

/** The newest webview panel's content frame. */
export function webview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
}

/** A notification toast (as a person sees it, bottom right) containing `text`. */
export function toast(page: Page, text: string | RegExp): Locator {
  return page.locator('.notifications-toasts .notification-toast', { hasText: text });
}

/**
 * The notification saying `text`, as a person finds it: its toast, held by the pointer resting on it
 * (VS Code keeps a toast the pointer is over), or, once it has faded, its entry in the notification
 * center. Waits up to `timeout` for the toast.
 */
export async function notification(page: Page, text: string | RegExp, timeout = 30_000): Promise<Locator> {
  const shown = toast(page, text).first();
  try {
    await shown.waitFor({ timeout });
    await shown.hover({ timeout: 3000 });
    return shown;
  } catch {
    // faded before the test got to it: the notification center keeps it
  }
  return inNotificationCenter(page, text);
}

/**
 * The notification center open, scrolled to its entry saying `text`. The center is a virtualized list
 * that renders only the rows in view, newest on top, so an early entry is below the fold once a few
 * came after it: the list is scrolled down step by step, and from the top again, until the entry shows.
 */
export async function inNotificationCenter(page: Page, text: string | RegExp, timeout = UI_MS): Promise<Locator> {
  const center = await openNotificationCenter(page);
  const listed = center.locator('.notification-list-item', { hasText: text }).first();
  const deadline = Date.now() + timeout;
  const seen = new Map<string, string>();
  for (let still = 0; !(await listed.isVisible());) {
    if (Date.now() > deadline)
      throw new Error(`no notification ${String(text)} within ${timeout} ms; listed: ${await center.innerText()}`);
    still = (await renderedRows(center, seen)) ? 0 : still + 1;
    // At the end of the list: from the top again (an entry may have come since).
    const atEnd = still >= 2;
    await scrollCenter(page, center, atEnd ? -100_000 : 150);
    if (atEnd) {
      still = 0;
      seen.clear();
    }
  }
  return listed;
}

/** Opens the notification center from the command palette; the center. */
async function openNotificationCenter(page: Page): Promise<Locator> {
  await palette(page, 'Notifications: Show Notifications');
  const center = page.locator('.notifications-center');
  await center.waitFor({ timeout: UI_MS });
  return center;
}

/**
 * The notification center is a virtualized list that renders only the rows in view: adds the rows it
 * renders now to `seen` (text by row index); true when one of them was not there before.
 */
async function renderedRows(center: Locator, seen: Map<string, string>): Promise<boolean> {
  const rows = await center
    .locator('.monaco-list-row')
    .evaluateAll((els) =>
      els.map((e) => [e.getAttribute('data-index') ?? '', (e as unknown as { innerText: string }).innerText] as const),
    );
  const before = seen.size;
  for (const [i, text] of rows) seen.set(i, text.replace(/\s+/g, ' '));
  return seen.size > before;
}

/** Scrolls the open notification center by `dy` pixels with the mouse wheel. */
async function scrollCenter(page: Page, center: Locator, dy: number): Promise<void> {
  await center.locator('.monaco-list').hover();
  await page.mouse.wheel(0, dy);
  await page.waitForTimeout(100);
}

/**
 * Clicks `button` on the notification saying `text`: on its toast while it shows, else in the
 * notification center, which keeps it, buttons and all. VS Code removes an info toast 10 s after it
 * showed (12 s a warning, 15 s an error: PURGE_TIMEOUT in notificationsToasts.ts) while the window has
 * focus and the pointer is elsewhere, and on a busy machine a test's screenshots and checks take longer.
 */
export async function clickNotification(page: Page, text: string | RegExp, button: string): Promise<void> {
  const found = await notification(page, text, 3000);
  await found.getByRole('button', { name: button }).click({ timeout: 15_000 });
}

/**
 * Types `text` into the editor box `box` (a comment's, say) as a person does: clicks into it, types,
 * and looks that the text is there. A toast or a view redrawn while agents write can take the focus
 * between the box opening and the typing; the keys then go elsewhere, so it is clicked and typed again
 * (replacing what it holds) until the box shows the text, three times at most.
 */
export async function typeInBox(page: Page, box: Locator, text: string): Promise<void> {
  const shown = box.locator('.view-lines', { hasText: text });
  for (let attempt = 1; !(await shown.isVisible()); attempt++) {
    if (attempt > 3) assert.fail(`"${text}" did not reach the box after 3 tries; it shows: ${await box.innerText()}`);
    await box.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(text);
    await shown.waitFor({ timeout: 3000 }).catch(() => undefined);
  }
}

/** Clears a notification the person has read, unless VS Code removed it already (an info toast goes after 10 s). */
export async function dismissNotification(found: Locator): Promise<void> {
  await found
    .hover({ timeout: 3000 })
    .then(() => found.locator('.codicon-notifications-clear').click({ timeout: 3000 }))
    .catch(() => undefined);
  await found.waitFor({ state: 'detached', timeout: 15_000 });
}

/**
 * Clicks `button` in VS Code's modal dialog and waits until the dialog has gone, clicking again if
 * the first click did not take (on a busy machine a click can land while the dialog still animates in).
 */
export async function answerDialog(page: Page, button: string): Promise<void> {
  const dialog = page.locator('.monaco-dialog-box');
  for (let attempt = 1; ; attempt++) {
    await dialog.getByRole('button', { name: button }).click({ timeout: 15_000 });
    try {
      await dialog.waitFor({ state: 'detached', timeout: 10_000 });
      return;
    } catch (err) {
      if (attempt >= 3 || !(await dialog.isVisible())) throw err;
      console.log(`[dialog] ${button} did not take on try ${attempt}: trying again`);
    }
  }
}

/** Opens the Springfield container and drags the sidebar wider, so descriptions are readable. */
export async function openSpringfield(page: Page, widen = 320): Promise<void> {
  await clickSpringfieldIcon(page);
  await page.locator('.part.sidebar .pane-header', { hasText: 'Epics' }).waitFor({ timeout: 120_000 });
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (!bar) return;
  const x = bar.x + bar.width + 1;
  const y = bar.y + bar.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + widen, y, { steps: 5 });
  await page.mouse.up();
}

/** Clicks an action in the Epics view's title bar. */
export async function epicsTitleAction(page: Page, label: string): Promise<void> {
  const header = page.locator('.part.sidebar .pane-header', { hasText: 'Epics' });
  await header.hover();
  await header.locator(`[aria-label="${label}"]`).click();
}

/**
 * Runs a context-menu action on a tree row and waits for what it should bring (`until`: a locator that
 * shows, or a wait that resolves within the timeout it is given). A live refresh of the row (a lease
 * countdown ticking, an agent's write) can close the menu or lose the click, so the right-click and the
 * click are tried again, up to three times, until `until` holds.
 */
export async function contextAction(
  page: Page,
  target: Locator,
  action: string | RegExp,
  until: Locator | ((timeout: number) => Promise<void>),
  timeout = 30_000,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    // A hover or menu left open (a context view) would take the right-click.
    await leaveHover(page);
    if (await page.locator('.context-view p, .context-view .monaco-hover, .context-view .action-label').count())
      await page.keyboard.press('Escape');
    await rightClick(page, target, timeout);
    const item = page.locator('.context-view .action-label', { hasText: action }).first();
    await item.waitFor({ timeout });
    // The mouse first, as a person would; if that did not take (a loaded machine), the keyboard.
    if (attempt === 1) await clickMenuItem(page, item);
    else await chooseInMenu(page, action);
    try {
      await (typeof until === 'function' ? until(timeout) : until.waitFor({ timeout }));
      return;
    } catch (err) {
      if (attempt >= 3) {
        // Say what the person would see instead (an error toast, a menu still open), so a failure on another machine explains itself.
        const toasts = await page
          .locator('.notifications-toasts .notification-toast')
          .allInnerTexts()
          .catch(() => []);
        const menu = await page
          .locator('.context-view')
          .allInnerTexts()
          .catch(() => []);
        throw new Error(
          `${action.toString()} did not bring what it should after 3 tries; toasts: ${JSON.stringify(toasts)}; menu: ${JSON.stringify(menu)}`,
          { cause: err },
        );
      }
      console.log(`[menu] ${action.toString()} did not take on try ${attempt}: trying again`);
      await page.keyboard.press('Escape');
    }
  }
}

/**
 * The labels of the context menu a right-click on `label`'s row opens (then closed). A live refresh of
 * the row (a countdown ticking, an agent's write) can lose the right-click, as in contextAction: it is
 * tried again, up to three times.
 */
export async function menuOf(page: Page, label: string): Promise<string[]> {
  const menu = page.locator('.context-view .action-label');
  const missed = await rightClickUntil(page, row(page, label).first(), menu.first(), `a menu on ${label}'s row`);
  if (missed) {
    await screenshot(page, 'no-menu');
    const dialog = page.locator('.monaco-dialog-box');
    const says = (await dialog.count()) > 0 ? await dialog.first().innerText() : 'no dialog';
    throw new Error(`no menu on ${label}'s row after 3 tries (${says.replace(/\s+/g, ' ')}): ${String(missed)}`);
  }
  const labels = (await menu.allInnerTexts()).map((t) => t.trim()).filter(Boolean);
  await closeMenus(page);
  return labels;
}

/**
 * Right-clicks `target` until `shown` (its menu, or an item of it) shows within 10 s, up to three times: a
 * live refresh of the row (a countdown ticking, an agent's write) can lose a right-click, and a menu
 * opened just before the row changed never gains the item. Undefined once shown; else the last wait's error.
 */
export async function rightClickUntil(page: Page, target: Locator, shown: Locator, what: string): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    await closeMenus(page);
    await leaveHover(page);
    await rightClick(page, target, UI_MS);
    try {
      await shown.waitFor({ timeout: 10_000 });
      return undefined;
    } catch (err) {
      if (attempt >= 3) return err ?? new Error(`no ${what}`);
      console.log(`[menu] no ${what} on try ${attempt}: right-clicking again`);
    }
  }
}

/** Closes any open context menu (Escape until none shows; a menu left open would take the next click). */
export async function closeMenus(page: Page): Promise<void> {
  const open = page.locator('.context-view .action-label');
  for (let i = 0; i < 5 && (await open.count()) > 0; i++) {
    await page.keyboard.press('Escape');
    await open
      .first()
      .waitFor({ state: 'detached', timeout: 2000 })
      .catch(() => undefined);
  }
}

/** `label`'s menu once `ok` holds for it, read again every second up to `ms`; fails naming the last menu and what `why` says. */
export async function menuUntil(
  page: Page,
  label: string,
  ok: (menu: string[]) => boolean,
  ms: number,
  why: () => Promise<string>,
): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const menu = await menuOf(page, label);
    if (ok(menu)) return menu;
    if (Date.now() > deadline) {
      await screenshot(page, 'menu-failed');
      assert.fail(`${label}'s menu after ${ms} ms: ${JSON.stringify(menu)}; ${await why()}`);
    }
    await page.waitForTimeout(1000);
  }
}

/**
 * Clicks an item of an open menu (a context menu, a view's "…" menu). VS Code's menu items take a
 * mouse-up only 100 ms after they show (so the release of the right-click that opened the menu does
 * not choose an item: `runOnceToEnableMouseUp` in its menu); a person's hand is slower than that, a
 * test's click may not be, and such a click does nothing. So the click waits that long first.
 */
export async function clickMenuItem(page: Page, item: Locator): Promise<void> {
  await item.waitFor();
  await page.waitForTimeout(150);
  await item.click();
}

/** Moves down the open context menu to the item labelled `action` and presses Enter. */
async function chooseInMenu(page: Page, action: string | RegExp): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('ArrowDown');
    const focused =
      (await page
        .locator('.context-view .action-item.focused .action-label')
        .first()
        .textContent()
        .catch(() => null)) ?? '';
    if (typeof action === 'string' ? focused.includes(action) : action.test(focused)) {
      await page.keyboard.press('Enter');
      return;
    }
  }
}

/** Runs a command from the palette by its title. */
export async function palette(page: Page, title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  // Opened again if it closed before the typing (a window that moved the focus while agents work closes it).
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    try {
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      await input.fill(`>${title}`, { timeout: 10_000 });
      await page
        .locator('.quick-input-list .monaco-list-row', { hasText: title.replace(/^.*: /, '') })
        .first()
        .waitFor({ state: 'visible', timeout: 30_000 });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
      console.log(
        `[palette] the command palette closed before "${title}" was chosen (try ${attempt}): opening it again`,
      );
    }
  }
  await page.keyboard.press('Enter');
}

/** Waits until `check()` holds; on failure, says what did not happen and, with `diagnose`, what it shows. */
export async function eventually(
  what: string,
  check: () => boolean,
  ms = 30_000,
  diagnose: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`${what}: not so within ${ms} ms\n${diagnose()}`.trimEnd());
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * Every notification in the notification center, by its text. The center is a virtualized list
 * that renders only the rows in view, so the list is scrolled to the end and rows are collected by
 * their index on the way.
 */
export async function allNotifications(page: Page): Promise<string[]> {
  await page.keyboard.press('Escape');
  const center = await openNotificationCenter(page);
  const seen = new Map<string, string>();
  for (let unchanged = 0; unchanged < 3;) {
    unchanged = (await renderedRows(center, seen)) ? 0 : unchanged + 1;
    await scrollCenter(page, center, 200);
  }
  await page.keyboard.press('Escape');
  return [...seen.values()];
}

/** The "Springfield scheduler" output channel of the code-server session that worked on `base`, for failure messages. */
export function schedulerLog(base: string): string {
  const found: string[] = [];
  for (const home of readdirSync(tmpdir()).filter((d) => d.startsWith('springfield-code-server-'))) {
    const logs = join(tmpdir(), home, 'user-data', 'logs');
    if (!existsSync(logs)) continue;
    for (const f of readdirSync(logs, { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('Springfield scheduler.log')) continue;
      const text = readFileSync(join(logs, f), 'utf8');
      if (text.includes(base)) found.push(text);
    }
  }
  return found.length
    ? `Springfield scheduler output:\n${found.join('\n---\n')}`
    : 'no "Springfield scheduler" output log found';
}
