// The web page of guide-mcp --http, driven in Debian's chromium through playwright-core.
// Each test starts from a fresh page; every page of every test is watched for console
// errors, uncaught exceptions and dialogs (an executed alert() would be one).
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, cpSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const BIN = process.env.GUIDE_BIN || resolve('../../bin');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = resolve('screenshots');
const HOSTILE = '<img src=x onerror=alert(1)>.md';
const HOSTILE_CONTENT = "# <script>alert('title')</script>\n\n<img src=x onerror=alert(2)>\n\n" +
  '<div onclick="alert(3)">raw block</div>\n\nInline <b onmouseover=alert(4)>bold</b> text about onerror.\n';
const TOKEN = 'browser-secret';

const work = mkdtempSync(join(tmpdir(), 'guide-browser-'));
const servers = [];
let browser;
let site;   // the page without a token
let signed; // the page with a token
const problems = [];

// startServer runs bin/guide-mcp over a copy of testdata/sample on a port the system
// picks, and learns the page's address from the line guide-mcp logs when it serves.
async function startServer(name, extra = []) {
  const root = join(work, name, 'sample');
  cpSync(resolve('../../testdata/sample'), root, { recursive: true });
  mkdirSync(join(root, 'Hostile'));
  writeFileSync(join(root, 'Hostile', HOSTILE), HOSTILE_CONTENT);
  const args = ['--root', root, '--data', join(work, name, 'data'), '--http', '127.0.0.1:0', '--log-level', 'info', ...extra];
  const proc = spawn(join(BIN, 'guide-mcp'), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (d) => { log += d; });
  servers.push(proc);
  for (let i = 0; i < 300; i++) {
    const m = log.match(/page=(http:\/\/127\.0\.0\.1:\d+)\//);
    if (m) {
      try {
        const r = await fetch(m[1] + '/healthz');
        if (r.ok) return { base: m[1], root, log: () => log };
      } catch { /* not ready yet */ }
    }
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`guide-mcp did not become ready:\n${log}`);
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  site = await startServer('open');
  const tokenFile = join(work, 'token');
  writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
  signed = await startServer('signed', ['--token-file', tokenFile]);
});

// stopServer stops a guide-mcp and waits for it to exit: it writes to its data folder
// (the embedded NATS server's store) until then, so removing the folder any sooner can
// fail with ENOTEMPTY. One that has not exited after 10 s is killed.
function stopServer(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    proc.once('exit', () => { clearTimeout(timer); done(); });
    proc.kill('SIGTERM');
  });
}

after(async () => {
  await browser?.close();
  await Promise.all(servers.map(stopServer));
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  const found = problems.splice(0);
  assert.deepEqual(found, [], 'console errors, page errors or dialogs');
});

// newPage opens a page in a context of its own (a browser session of its own), watched.
async function newPage(opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()} (${page.url()})`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
  return page;
}

async function text(page, selector) {
  return (await page.locator(selector).first().textContent()).trim();
}

async function attachFiles(page, files) {
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.getByRole('button', { name: 'Attach files', exact: true }).click(),
  ]);
  assert.ok(chooser.isMultiple(), 'the chooser takes several files');
  await chooser.setFiles(files.map(([name, content]) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(content) })));
}

// watchWidgets records every status each widget shows, in order.
async function watchWidgets(page) {
  await page.evaluate(() => {
    window.seen = {};
    const note = (li) => {
      const s = (window.seen[li.dataset.name] ||= []);
      if (s[s.length - 1] !== li.dataset.status) s.push(li.dataset.status);
    };
    new MutationObserver((ms) => {
      for (const m of ms) {
        if (m.type === 'attributes') note(m.target);
        for (const n of m.addedNodes || []) if (n.dataset && n.dataset.name) note(n);
      }
    }).observe(document.getElementById('attachments'), { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  });
}

function widget(page, name) {
  return page.locator('#attachments li.chip').filter({ has: page.locator('.name', { hasText: name }) });
}

test('search and open a result', async () => {
  const page = await newPage();
  await page.goto(site.base + '/');
  await page.getByRole('searchbox', { name: 'Search' }).fill('dragon');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/search\?q=dragon/);
  assert.match(await text(page, 'main h1'), /^1 document matches/);
  assert.match(await text(page, '.hits .snippet mark'), /dragon/i);
  await page.getByRole('link', { name: 'Dragons' }).click();
  await page.waitForURL(/\/view\/Worldbuilding\/Creatures\/Dragons\.md$/);
  assert.equal(await text(page, '.content h1'), 'Dragons');
  await page.context().close();
});

test('browse root → folder → document', async () => {
  const page = await newPage();
  await page.goto(site.base + '/');
  await page.getByRole('link', { name: 'Characters', exact: true }).click();
  await page.waitForURL(/\/view\/Characters$/);
  assert.equal(await text(page, 'main h1'), 'Characters');
  const project = await text(page, '.brand .project');
  assert.match(project, /^sample/);
  assert.equal(await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link').first().textContent(), project);
  await page.getByRole('link', { name: 'Elara.md', exact: true }).click();
  await page.waitForURL(/\/view\/Characters\/Elara\.md$/);
  assert.equal(await text(page, '.content h1'), 'Elara Voss');
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Characters' }).click();
  await page.waitForURL(/\/view\/Characters$/);
  await page.context().close();
});

test('the status line changes while files are added, without a reload', async () => {
  const page = await newPage();
  await page.goto(site.base + '/');
  const before = await text(page, '#status .docs');
  const n = Number(before.replace(/\D/g, ''));
  await page.evaluate(() => { window.notReloaded = true; });
  for (let i = 0; i < 3; i++) writeFileSync(join(site.root, `added-${i}.md`), `# Added ${i}\n\nfresh words`);
  await page.waitForFunction((want) => document.querySelector('#status .docs').textContent === want,
    `${n + 3} documents`, { timeout: 30000 });
  assert.equal(await page.evaluate(() => window.notReloaded), true, 'the page was not reloaded');
  assert.match(await text(page, '#status .detail'), /up to date|to apply|indexing/);
  await page.context().close();
});

test('attach two files: each widget goes to ready, they are searchable, one is removed', async (t) => {
  const page = await newPage();
  await page.goto(site.base + '/');
  await watchWidgets(page);
  await attachFiles(page, [['minutes.md', '# Minutes\n\nThe wombat committee met.'], ['todo.txt', 'feed the wombat']]);
  for (const name of ['minutes.md', 'todo.txt']) {
    await widget(page, name).and(page.locator('[data-status="ready"]')).waitFor({ timeout: 20000 });
    assert.equal(await widget(page, name).locator('.state').textContent(), 'ready');
    await widget(page, name).getByRole('button', { name: `Remove ${name}`, exact: true }).waitFor();
  }
  const seen = await page.evaluate(() => window.seen);
  t.diagnostic(`statuses shown: ${JSON.stringify(seen)}`);
  for (const name of ['minutes.md', 'todo.txt']) {
    assert.deepEqual(seen[name], ['uploading', 'processing', 'ready'], `statuses of ${name}`);
  }
  await page.screenshot({ path: join(SHOTS, 'attachments-desktop.png') });

  await page.getByRole('searchbox', { name: 'Search' }).fill('wombat');
  await page.keyboard.press('Enter');
  await page.waitForURL(/q=wombat/);
  assert.equal(await page.locator('.hits li').count(), 2);
  await page.getByRole('link', { name: 'Minutes', exact: true }).click();
  await page.waitForURL(/\/session\/minutes\.md$/);
  assert.equal(await text(page, '.content h1'), 'Minutes');

  await widget(page, 'todo.txt').getByRole('button', { name: 'Remove todo.txt' }).click();
  await widget(page, 'todo.txt').waitFor({ state: 'detached' });
  await page.reload();
  assert.equal(await widget(page, 'todo.txt').count(), 0, 'removed for good');
  assert.equal(await widget(page, 'minutes.md').count(), 1, 'the other stays');
  await page.goto(site.base + '/search?q=wombat');
  assert.equal(await page.locator('.hits li').count(), 1);

  // A second browser session never sees them.
  const other = await newPage();
  await other.goto(site.base + '/');
  assert.equal(await other.locator('#attachments li').count(), 0, 'no widgets in another session');
  await other.goto(site.base + '/search?q=wombat&scope=all');
  assert.equal(await other.locator('.hits li').count(), 0, 'not found by another session');
  const res = await other.goto(site.base + '/session/minutes.md');
  assert.equal(res.status(), 404);
  problems.splice(0); // the 404 above is expected, and logged by the browser
  await other.context().close();

  // Ending the session deletes them.
  await page.getByRole('button', { name: 'End this session' }).click();
  await page.waitForURL(site.base + '/');
  assert.equal(await page.locator('#attachments li').count(), 0);
  await page.context().close();
});

test('a failed upload says why', async () => {
  const page = await newPage();
  await page.goto(site.base + '/');
  await attachFiles(page, [['logo.png', '\x89PNG\r\n\x1a\n\x00\x00\x00']]);
  await widget(page, 'logo.png').and(page.locator('[data-status="failed"]')).waitFor({ timeout: 20000 });
  assert.match(await widget(page, 'logo.png').locator('.state').textContent(), /^failed: binary file/);
  await widget(page, 'logo.png').getByRole('button', { name: 'Remove logo.png' }).click();
  await widget(page, 'logo.png').waitFor({ state: 'detached' });
  await page.context().close();
});

test('hostile file names and content render as text', async () => {
  const page = await newPage();
  await page.goto(site.base + '/view/Hostile');
  const link = page.getByRole('link', { name: HOSTILE, exact: true });
  assert.equal(await link.textContent(), HOSTILE);
  assert.equal(await page.locator('main img').count(), 0);
  await link.click();
  await page.waitForURL(/\/view\/Hostile\//);
  assert.equal(await text(page, 'main h1'), HOSTILE);
  assert.match(await page.locator('.content').textContent(), /<script>alert\('title'\)<\/script>/);
  assert.match(await page.locator('.content').textContent(), /<img src=x onerror=alert\(2\)>/);
  assert.equal(await page.locator('.content img, .content script, .content div[onclick], .content b').count(), 0);

  await attachFiles(page, [[HOSTILE, HOSTILE_CONTENT]]);
  await widget(page, HOSTILE).and(page.locator('[data-status="ready"]')).waitFor({ timeout: 20000 });
  await widget(page, HOSTILE).getByRole('button', { name: `Remove ${HOSTILE}`, exact: true }).waitFor();
  await page.reload();
  assert.equal(await widget(page, HOSTILE).locator('.name').textContent(), HOSTILE);
  await widget(page, HOSTILE).getByRole('link', { name: HOSTILE }).click();
  await page.waitForURL(/\/session\//);
  assert.match(await page.locator('.content').textContent(), /<img src=x onerror=alert\(2\)>/);
  await page.goto(site.base + '/search?q=onerror&scope=all');
  assert.equal(await page.locator('main img').count(), 0);
  assert.ok((await page.locator('.hits li').count()) >= 2);
  await page.context().close();
});

test('search, browse and read work with JavaScript off; the plain form attaches', async () => {
  const page = await newPage({ javaScriptEnabled: false });
  await page.goto(site.base + '/');
  await page.getByRole('searchbox', { name: 'Search' }).fill('cartographer');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/q=cartographer/);
  await page.getByRole('link', { name: 'Elara Voss' }).click();
  await page.waitForURL(/Elara\.md$/);
  assert.equal(await text(page, '.content h1'), 'Elara Voss');
  await page.goto(site.base + '/view/Worldbuilding');
  await page.getByRole('button', { name: 'Focus here' }).click();
  await page.waitForURL(/\/view\/Worldbuilding$/);
  assert.match(await text(page, '.focusbox'), /Focused here/);
  await page.getByLabel('Attach files').and(page.locator('input[type=file]')).setInputFiles([{ name: 'plain.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plain\n\nno script') }]);
  await page.getByRole('button', { name: 'Upload' }).click();
  await page.waitForURL(/\/attach$/);
  assert.match(await text(page, '.outcomes li'), /plain\.md: ready/);
  assert.equal(await widget(page, 'plain.md').getAttribute('data-status'), 'ready');
  await widget(page, 'plain.md').getByRole('button', { name: 'Remove plain.md' }).click();
  await page.waitForURL(/\/view\/Worldbuilding$/);
  assert.equal(await widget(page, 'plain.md').count(), 0);
  await page.context().close();
});

test('sign in with a token', async () => {
  const page = await newPage();
  await page.goto(signed.base + '/view/Characters');
  await page.waitForURL(/\/signin\?next=/);
  await page.getByLabel('Access token').fill('not-it');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  problems.splice(0); // the 401 of the wrong token is logged by the browser
  await page.getByLabel('Access token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(signed.base + '/view/Characters');
  assert.equal(await text(page, 'main h1'), 'Characters');
  const cookie = (await page.context().cookies()).find((c) => c.name === 'guide_signin');
  assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', JSON.stringify(cookie));
  assert.ok(!cookie.value.includes(TOKEN));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/signin/);
  await page.context().close();
});

test('recent changes: from a page, what changed after it, newest first, with its diff on request', async () => {
  const page = await newPage();
  await page.goto(site.base + '/');
  await page.getByRole('link', { name: 'Recent changes' }).click();
  await page.waitForURL(/\/changes$/);
  assert.equal(await text(page, 'main h1'), 'Recent changes');
  await page.getByRole('link', { name: 'Changes after these' }).click();
  await page.waitForURL(/\/changes\?cursor=/);
  const note = join(site.root, 'Characters', 'Elara.md');
  writeFileSync(note, readFileSync(note, 'utf8').replace('Elara Voss', 'Elara Voss, changed'));
  // The indexer publishes the save within moments: reload until it is listed.
  const modified = page.locator('li.change[data-change="modified"]', { hasText: 'Characters/Elara.md' });
  for (let i = 0; i < 100 && !(await modified.count()); i++) {
    await new Promise((r) => setTimeout(r, 100));
    await page.reload();
  }
  assert.match(await page.locator('li.change').first().textContent(), /modified\s+Characters\/Elara\.md/);
  await page.getByRole('link', { name: 'Show diffs' }).click();
  await page.waitForURL(/diff=1/);
  assert.match(await text(page, 'li.change pre.diff'), /^--- a\/Characters\/Elara\.md[\s\S]*\+# Elara Voss, changed/);
  await page.screenshot({ path: join(SHOTS, 'changes-desktop.png'), fullPage: true });
  await page.context().close();
});

test('screenshots at desktop and phone widths', async () => {
  for (const [w, h, tag] of [[1280, 600, 'desktop'], [390, 700, 'phone']]) {
    const page = await newPage({ viewport: { width: w, height: h } });
    await page.goto(site.base + '/');
    await attachFiles(page, [['meeting notes.md', '# Meeting notes\n\nThe dragon budget.'], ['logo.png', '\x89PNG\x00\x00']]);
    await widget(page, 'logo.png').and(page.locator('[data-status="failed"]')).waitFor({ timeout: 20000 });
    await widget(page, 'meeting notes.md').and(page.locator('[data-status="ready"]')).waitFor({ timeout: 20000 });
    await page.screenshot({ path: join(SHOTS, `home-${tag}.png`), fullPage: true });
    await page.getByRole('searchbox', { name: 'Search' }).fill('dragon');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=dragon/);
    await page.screenshot({ path: join(SHOTS, `search-${tag}.png`), fullPage: true });
    await page.goto(site.base + '/view/Characters/Elara.md');
    await page.screenshot({ path: join(SHOTS, `document-${tag}.png`), fullPage: true });
    await page.context().close();
  }
});
