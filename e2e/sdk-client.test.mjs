// The official MCP TypeScript SDK client drives every tool and resource of guide-mcp, over
// stdio and over Streamable HTTP (with a bearer token). Run by run.sh with node --test.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const BIN = process.env.GUIDE_BIN ?? resolve('../bin');
const ROOT = resolve('../testdata/content');
const SAMPLE = resolve('../testdata/sample');
const TOKEN = 'e2e-token';

const freePort = () => new Promise((ok, fail) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
  s.on('error', fail);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitCaughtUp(client) {
  for (let i = 0; i < 300; i++) {
    const r = await client.readResource({ uri: 'guide://_status' });
    const st = JSON.parse(r.contents[0].text);
    if (st.initial_scan_done && st.lag === 0 && st.caught_up) return st;
    await sleep(100);
  }
  throw new Error('guide-mcp did not catch up');
}

const json = (result) => JSON.parse(result.content[0].text);

// Every tool and resource, the same whatever the transport.
function suite(name, connect) {
  describe(name, () => {
    let client, close;
    before(async () => {
      ({ client, close } = await connect());
      await waitCaughtUp(client);
    });
    after(async () => { await client?.close(); await close?.(); });

    // focus, attach and detach change this session's state (never the project's):
    // they are the only tools not annotated read-only.
    const sessionTools = ['attach', 'detach', 'focus'];

    test('lists every tool, annotated', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['analyze', 'attach', 'changes', 'detach', 'focus', 'get_category_content',
        'get_collection_content', 'get_content', 'get_summary', 'list', 'search', 'tree', 'view']);
      for (const t of tools) {
        assert.equal(t.annotations?.readOnlyHint, !sessionTools.includes(t.name), `${t.name} readOnlyHint`);
        assert.equal(t.annotations?.openWorldHint, false, `${t.name} openWorldHint`);
      }
    });

    test('search', async () => {
      const r = json(await client.callTool({ name: 'search', arguments: { query: 'python' } }));
      assert.ok(r.hits.some((h) => h.path === 'lang/python.md'), JSON.stringify(r));
      const bad = await client.callTool({ name: 'search', arguments: { query: '' } });
      assert.equal(bad.isError, true);
      assert.equal(json(bad).error_type, 'invalid_argument');
    });

    test('contexts: focus, list, attach, view, search, get_summary, analyze, detach', async () => {
      const f = json(await client.callTool({ name: 'focus', arguments: { context: 'lang' } }));
      assert.equal(f.focus, 'lang');
      const l = json(await client.callTool({ name: 'list', arguments: {} }));
      assert.ok(l.documents.some((d) => d.path === 'lang/python.md' && d.context_type === 'focus'), JSON.stringify(l));
      assert.ok(!l.documents.some((d) => d.path.startsWith('guidelines/')), 'guidelines are outside the focus set');

      const a = json(await client.callTool({ name: 'attach',
        arguments: { filename: 'e2e notes.md', content: '# E2E notes\n\nThe zebrafish ships on Tuesday.\n' } }));
      assert.equal(a.status, 'ready', JSON.stringify(a));
      const v = json(await client.callTool({ name: 'view', arguments: { path: 'session:e2e notes.md' } }));
      assert.match(v.content, /zebrafish/);
      const hits = json(await client.callTool({ name: 'search', arguments: { query: 'zebrafish' } })).hits;
      assert.deepEqual(hits.map((h) => [h.path, h.context_type]), [['session:e2e notes.md', 'session']]);
      const sum = json(await client.callTool({ name: 'get_summary', arguments: { path: 'session:e2e notes.md' } }));
      assert.equal(sum.title, 'E2E notes');
      const an = json(await client.callTool({ name: 'analyze', arguments: { path: 'lang/python.md' } }));
      assert.ok(an.words > 0, JSON.stringify(an));
      await client.callTool({ name: 'detach', arguments: { filename: 'e2e notes.md' } });
      const gone = await client.callTool({ name: 'view', arguments: { path: 'session:e2e notes.md' } });
      assert.equal(gone.isError, true);
    });

    test('the guide prompt', async () => {
      const { prompts } = await client.listPrompts();
      assert.ok(prompts.some((p) => p.name === 'guide'), JSON.stringify(prompts));
      const p = await client.getPrompt({ name: 'guide' });
      const text = p.messages.map((m) => m.content.text).join('\n');
      assert.match(text, /Focus context/);
    });

    test('view of the root and of a document', async () => {
      const root = json(await client.callTool({ name: 'view', arguments: { path: '' } }));
      assert.ok(JSON.stringify(root).includes('guidelines'));
      const doc = await client.callTool({ name: 'view', arguments: { path: 'guidelines/style.md' } });
      assert.notEqual(doc.isError, true);
      assert.match(doc.content[0].text, /style/i);
    });

    test('view refuses a path outside the root', async () => {
      const r = await client.callTool({ name: 'view', arguments: { path: '../../etc/passwd' } });
      assert.equal(r.isError, true);
      assert.equal(json(r).error_type, 'invalid_path');
    });

    test('tree', async () => {
      const t = json(await client.callTool({ name: 'tree', arguments: { folder: '', depth: 2 } }));
      assert.equal(t.type, 'folder');
      assert.ok(t.children.length > 0);
    });

    test('get_content, get_category_content, get_collection_content', async () => {
      for (const [tool, args] of [
        ['get_content', { category_or_collection: 'guidelines' }],
        ['get_category_content', { category: 'guidelines' }],
        ['get_collection_content', { collection: 'dev' }],
      ]) {
        const r = await client.callTool({ name: tool, arguments: args });
        assert.notEqual(r.isError, true, `${tool}: ${r.content[0].text}`);
        assert.equal(json(r).success, true, tool);
      }
      const missing = await client.callTool({ name: 'get_content', arguments: { category_or_collection: 'nope' } });
      assert.equal(missing.isError, true);
    });

    test('resources: status, templates, a collection and one of its documents', async () => {
      const { resources } = await client.listResources();
      assert.ok(resources.some((r) => r.uri === 'guide://_status'));
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.ok(resourceTemplates.length >= 2);
      const coll = await client.readResource({ uri: 'guide://guidelines' });
      assert.ok(coll.contents[0].text.length > 0);
      const one = await client.readResource({ uri: 'guide://guidelines/style' });
      assert.match(one.contents[0].text, /style/i);
    });

    test('completion of a collection name', async () => {
      const r = await client.complete({
        ref: { type: 'ref/resource', uri: 'guide://{collection}' },
        argument: { name: 'collection', value: 'gu' },
      });
      assert.ok(r.completion.values.includes('guidelines'), JSON.stringify(r));
    });

    test('ping, logging/setLevel, subscribe and unsubscribe', async () => {
      await client.ping();
      await client.setLoggingLevel('warning');
      await client.subscribeResource({ uri: 'guide://guidelines' });
      await client.unsubscribeResource({ uri: 'guide://guidelines' });
    });
  });
}

suite('stdio', async () => {
  const data = mkdtempSync(join(tmpdir(), 'guide-e2e-'));
  const transport = new StdioClientTransport({
    command: join(BIN, 'guide-mcp'),
    args: ['--root', ROOT, '--data', data, '--log-level', 'warn', '--idle-timeout', '1s'],
    stderr: 'inherit',
  });
  const client = new Client({ name: 'guide-e2e', version: '0' });
  await client.connect(transport);
  return { client, close: async () => rmSync(data, { recursive: true, force: true }) };
});

// guide-mcp with no --root, as a client configured with the command alone starts it: it
// serves the first of the client's roots, in the user's default data directory.
function rootsClient(home, roots) {
  const transport = new StdioClientTransport({
    command: join(BIN, 'guide-mcp'),
    args: ['--log-level', 'warn', '--idle-timeout', '1s'],
    env: { HOME: home, XDG_DATA_HOME: join(home, 'data') },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'guide-e2e', version: '0' },
    roots ? { capabilities: { roots: { listChanged: true } } } : {});
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.list }));
  return { client, transport };
}

const fileURI = (path) => new URL(`file://${path}`).href;

suite('stdio with the client\'s roots and no --root', async () => {
  const home = mkdtempSync(join(tmpdir(), 'guide-e2e-'));
  const { client, transport } = rootsClient(home, { list: [{ uri: fileURI(ROOT), name: 'content' }] });
  await client.connect(transport);
  return { client, close: async () => rmSync(home, { recursive: true, force: true }) };
});

describe('stdio roots', () => {
  let home;
  before(() => { home = mkdtempSync(join(tmpdir(), 'guide-e2e-')); });
  after(() => rmSync(home, { recursive: true, force: true }));

  test('one root of several is a folder: it is served, its paths as they are', async () => {
    const roots = { list: [{ uri: 'https://example.com/docs', name: 'web' }, { uri: fileURI(SAMPLE), name: 'sample' }] };
    const { client, transport } = rootsClient(home, roots);
    await client.connect(transport);
    try {
      const st = await waitCaughtUp(client);
      assert.match(st.project, /^sample-[0-9a-f]{8}$/, JSON.stringify(st));
      const r = json(await client.callTool({ name: 'view', arguments: { path: '' } }));
      assert.ok(JSON.stringify(r).includes('Characters'), JSON.stringify(r));
    } finally {
      await client.close();
    }
  });

  test('a client without roots: every call names the --root fix', async () => {
    const { client, transport } = rootsClient(home, null);
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'search'));
      const r = await client.callTool({ name: 'search', arguments: { query: 'python' } });
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /"args": \["--root", "\/path\/to\/docs"\]/);
    } finally {
      await client.close();
    }
  });
});

suite('streamable HTTP with a bearer token', async () => {
  const data = mkdtempSync(join(tmpdir(), 'guide-e2e-'));
  const tokenFile = join(data, 'token');
  writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
  const port = await freePort();
  const proc = spawn(join(BIN, 'guide-mcp'),
    ['--root', ROOT, '--data', join(data, 'd'), '--http', `127.0.0.1:${port}`, '--token-file', tokenFile, '--log-level', 'warn'],
    { stdio: ['ignore', 'inherit', 'inherit'] });
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  for (let i = 0; i < 100; i++) {
    try { await fetch(`http://127.0.0.1:${port}/healthz`); break; } catch { await sleep(100); }
  }
  // Without the token: refused.
  const denied = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  assert.equal(denied.status, 401);

  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  const client = new Client({ name: 'guide-e2e', version: '0' });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(data, { recursive: true, force: true });
    },
  };
});

// Several roots: each folder its own project with its own owner, one tree for the tools,
// each root below its name; the bridge the client runs stays small.
describe('stdio with several roots', () => {
  let home, client, transport, roots, one, two, extra;
  const kB = (pid, field) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))[1]);

  async function waitRoots(names) {
    for (let i = 0; i < 600; i++) {
      const st = JSON.parse((await client.readResource({ uri: 'guide://_status' })).contents[0].text);
      const got = (st.roots ?? []).map((r) => r.name);
      if (JSON.stringify(got) === JSON.stringify(names) && st.caught_up && st.initial_scan_done && st.lag === 0) return st;
      await sleep(100);
    }
    throw new Error(`the roots did not become ${names}`);
  }

  before(async () => {
    home = realpathSync(mkdtempSync(join(tmpdir(), 'guide-e2e-')));
    one = join(home, 'one', 'docs');
    two = join(home, 'two', 'docs');
    extra = join(home, 'extra');
    cpSync(SAMPLE, one, { recursive: true });
    for (const [dir, file, text] of [[two, 'intro.md', '# Second docs\n\nThe heron of the second docs.\n'],
      [two, 'notes/heron.md', '# Heron\n\nA heron, a heron.\n'], [extra, 'extra.md', '# Extra\n\nAn extra heron.\n']]) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    writeFileSync(join(one, 'heron.md'), '# Heron one\n\nThe heron of the first docs.\n');
    roots = { list: [{ uri: fileURI(one), name: 'one' }, { uri: fileURI(two), name: 'two' }, { uri: fileURI(ROOT), name: 'content' }] };
    ({ client, transport } = rootsClient(home, roots));
    await client.connect(transport);
    await waitRoots(['docs', 'docs-2', 'content']);
  });
  after(async () => { await client?.close(); rmSync(home, { recursive: true, force: true }); });

  test('view and tree: the roots at the top, each below its name', async () => {
    const top = json(await client.callTool({ name: 'view', arguments: { path: '' } }));
    assert.deepEqual(top.folders.map((f) => f.path), ['docs', 'docs-2', 'content']);
    const doc = json(await client.callTool({ name: 'view', arguments: { path: 'docs-2/intro.md' } }));
    assert.equal(doc.path, 'docs-2/intro.md');
    assert.match(doc.content, /second docs/);
    const guide = json(await client.callTool({ name: 'view', arguments: { path: 'content/guidelines/style.md' } }));
    assert.equal(guide.path, 'content/guidelines/style.md');
    const t = json(await client.callTool({ name: 'tree', arguments: { folder: '', depth: 2 } }));
    assert.deepEqual(t.children.map((c) => c.path), ['docs', 'docs-2', 'content']);
    assert.ok(t.children[0].children.some((c) => c.path === 'docs/Characters'), JSON.stringify(t.children[0]));
    const sub = json(await client.callTool({ name: 'tree', arguments: { folder: 'docs-2/notes' } }));
    assert.deepEqual(sub.children.map((c) => c.path), ['docs-2/notes/heron.md']);
    const missing = await client.callTool({ name: 'view', arguments: { path: 'nope/x.md' } });
    assert.equal(json(missing).error_type, 'not_found');
    const outside = await client.callTool({ name: 'view', arguments: { path: '../../etc/passwd' } });
    assert.equal(json(outside).error_type, 'invalid_path');
  });

  test('search: every root, merged by rank; a folder narrows it to one', async () => {
    const r = json(await client.callTool({ name: 'search', arguments: { query: 'heron', scope: 'all' } }));
    const paths = r.hits.map((h) => h.path);
    for (const p of ['docs/heron.md', 'docs-2/intro.md', 'docs-2/notes/heron.md']) assert.ok(paths.includes(p), JSON.stringify(paths));
    assert.deepEqual(new Set(paths.slice(0, 2).map((p) => p.split('/')[0])), new Set(['docs', 'docs-2']));
    let paged = [], cursor;
    do {
      const pg = json(await client.callTool({ name: 'search', arguments: { query: 'heron', scope: 'all', limit: 1, ...(cursor ? { cursor } : {}) } }));
      paged = paged.concat(pg.hits.map((h) => h.path));
      cursor = pg.next_cursor;
    } while (cursor);
    assert.deepEqual(paged, paths);
    const one2 = json(await client.callTool({ name: 'search', arguments: { query: 'heron', folder: 'docs-2' } }));
    assert.ok(one2.hits.length > 0 && one2.hits.every((h) => h.path.startsWith('docs-2/')), JSON.stringify(one2));
    const py = json(await client.callTool({ name: 'search', arguments: { query: 'python' } }));
    assert.ok(py.hits.some((h) => h.path === 'content/lang/python.md'), JSON.stringify(py));
  });

  test('changes: every root after a cursor, each below its name', async () => {
    const start = json(await client.callTool({ name: 'changes', arguments: { since: 'now' } }));
    writeFileSync(join(two, 'notes/egret.md'), '# Egret\n\nAn egret.\n');
    writeFileSync(join(one, 'egret.md'), '# Egret one\n\nAn egret too.\n');
    const r = json(await client.callTool({ name: 'changes', arguments: { cursor: start.cursor } }));
    assert.deepEqual(r.changes.map((c) => `${c.change} ${c.path}`).sort(), ['added docs-2/notes/egret.md', 'added docs/egret.md'], JSON.stringify(r));
    const one2 = json(await client.callTool({ name: 'changes', arguments: { cursor: start.cursor, folder: 'docs-2' } }));
    assert.deepEqual(one2.changes.map((c) => c.path), ['docs-2/notes/egret.md']);
  });

  test('list, focus, get_summary, analyze, attach, detach', async () => {
    const all = json(await client.callTool({ name: 'list', arguments: { scope: 'all', limit: 500 } }));
    for (const root of ['docs/', 'docs-2/', 'content/']) assert.ok(all.documents.some((d) => d.path.startsWith(root)), root);
    assert.equal(all.documents.length, all.total);
    const f = json(await client.callTool({ name: 'focus', arguments: { context: 'docs-2' } }));
    assert.equal(f.focus, 'docs-2');
    const l = json(await client.callTool({ name: 'list', arguments: {} }));
    assert.ok(l.documents.length > 0 && l.documents.every((d) => d.path.startsWith('docs-2/')), JSON.stringify(l));
    const a = json(await client.callTool({ name: 'attach', arguments: { filename: 'e2e.md', content: '# E2E\n\nThe axolotl waves.\n' } }));
    assert.equal(a.status, 'ready', JSON.stringify(a));
    const s = json(await client.callTool({ name: 'search', arguments: { query: 'axolotl' } }));
    assert.deepEqual(s.hits.map((h) => h.path), ['session:e2e.md']);
    await client.callTool({ name: 'focus', arguments: { context: '' } });
    const sum = json(await client.callTool({ name: 'get_summary', arguments: { path: 'docs-2/notes/heron.md' } }));
    assert.equal(sum.title, 'Heron');
    assert.equal(sum.path, 'docs-2/notes/heron.md');
    const an = json(await client.callTool({ name: 'analyze', arguments: { path: 'content/lang/python.md' } }));
    assert.equal(an.path, 'content/lang/python.md');
    assert.ok(an.words > 0);
    await client.callTool({ name: 'detach', arguments: { filename: 'e2e.md' } });
    const gone = await client.callTool({ name: 'view', arguments: { path: 'session:e2e.md' } });
    assert.equal(gone.isError, true);
  });

  test('content tools, resources, completion, prompts', async () => {
    for (const [tool, args] of [
      ['get_content', { category_or_collection: 'content/guidelines' }],
      ['get_content', { category_or_collection: 'guidelines' }],
      ['get_category_content', { category: 'content/guidelines' }],
      ['get_collection_content', { collection: 'content/dev' }],
    ]) {
      const r = await client.callTool({ name: tool, arguments: args });
      assert.notEqual(r.isError, true, `${tool}: ${r.content[0].text}`);
      assert.equal(json(r).success, true, tool);
    }
    const one = await client.readResource({ uri: 'guide://content/guidelines/style' });
    assert.equal(one.contents[0].uri, 'guide://content/guidelines/style');
    assert.match(one.contents[0].text, /style/i);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.ok(resourceTemplates.every((t) => t.uriTemplate.startsWith('guide://{root}/')), JSON.stringify(resourceTemplates));
    const rootNames = await client.complete({ ref: { type: 'ref/resource', uri: 'guide://{root}/{collection}' }, argument: { name: 'root', value: 'do' } });
    assert.deepEqual(rootNames.completion.values, ['docs', 'docs-2']);
    const coll = await client.complete({ ref: { type: 'ref/resource', uri: 'guide://{root}/{collection}' }, argument: { name: 'collection', value: 'gu' } });
    assert.ok(coll.completion.values.includes('guidelines'), JSON.stringify(coll));
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'guide'));
    await client.ping();
    await client.setLoggingLevel('warning');
    await client.subscribeResource({ uri: 'guide://content/guidelines' });
    await client.unsubscribeResource({ uri: 'guide://content/guidelines' });
  });

  test('a change of roots adds and drops a project, the rest of the session kept', async () => {
    await client.callTool({ name: 'attach', arguments: { filename: 'kept.md', content: '# Kept\n\nStill here.\n' } });
    roots.list = [{ uri: fileURI(one), name: 'one' }, { uri: fileURI(ROOT), name: 'content' }, { uri: fileURI(extra), name: 'extra' }];
    await client.sendRootsListChanged();
    await waitRoots(['docs', 'content', 'extra']);
    const top = json(await client.callTool({ name: 'view', arguments: { path: '' } }));
    assert.deepEqual(top.folders.map((f) => f.path), ['docs', 'content', 'extra']);
    const x = json(await client.callTool({ name: 'search', arguments: { query: 'heron', scope: 'all' } }));
    assert.ok(x.hits.some((h) => h.path === 'extra/extra.md'), JSON.stringify(x));
    assert.ok(!x.hits.some((h) => h.path.startsWith('docs-2/')), JSON.stringify(x));
    const kept = json(await client.callTool({ name: 'view', arguments: { path: 'session:kept.md' } }));
    assert.match(kept.content, /Still here/);
  });

  test('the bridge stays small', () => {
    const pid = transport.pid;
    const exe = realpathSync(`/proc/${pid}/exe`);
    assert.match(exe, /guide-bridge$/);
    const rss = kB(pid, 'VmRSS'), hwm = kB(pid, 'VmHWM');
    console.log(`guide-bridge serving three roots: VmRSS ${rss} kB, VmHWM ${hwm} kB`);
    assert.ok(hwm <= 20 * 1024, `VmHWM ${hwm} kB > 20 MB`);
    assert.ok(rss <= 20 * 1024, `VmRSS ${rss} kB > 20 MB`);
  });
});
