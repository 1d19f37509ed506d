// The official MCP TypeScript SDK client drives every tool and resource of guide-mcp, over
// stdio and over Streamable HTTP (with a bearer token). Run by run.sh with node --test.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

  test('the first root is served, and the new first one when the roots change', async () => {
    const roots = { list: [{ uri: fileURI(ROOT), name: 'content' }, { uri: fileURI(SAMPLE), name: 'sample' }] };
    const { client, transport } = rootsClient(home, roots);
    await client.connect(transport);
    try {
      const st = await waitCaughtUp(client);
      assert.match(st.project, /^content-[0-9a-f]{8}$/, JSON.stringify(st));
      roots.list = [{ uri: fileURI(SAMPLE), name: 'sample' }];
      await client.sendRootsListChanged();
      let project;
      for (let i = 0; i < 300 && !project?.startsWith('sample-'); i++) {
        project = JSON.parse((await client.readResource({ uri: 'guide://_status' })).contents[0].text).project;
        await sleep(100);
      }
      assert.match(project, /^sample-[0-9a-f]{8}$/);
      await waitCaughtUp(client);
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
