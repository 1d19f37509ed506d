// Times the search tool through the official MCP TypeScript SDK's stdio client, as the
// desktop clients built on it call it. Run by the search scenario (sdk.go):
//
//   node sdk-search.mjs REPS COMMAND ARGS... < WORDS
//
// WORDS holds one query a line. Each is searched once untimed, then REPS rounds over the
// list are timed, each call from the request to the parsed result. Prints one JSON line:
// {"ns": [durations], "errors": n, "first_error": "..."}.
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [reps, command, ...args] = process.argv.slice(2);
const words = readFileSync(0, 'utf8').split('\n').filter((w) => w !== '');
const client = new Client({ name: 'guide-bench-sdk', version: '0' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'inherit' }));
const search = (query) => client.callTool({ name: 'search', arguments: { query } });
for (const w of words) await search(w);
const ns = [];
let errors = 0;
let firstError = '';
for (let r = 0; r < Number(reps); r++) {
  for (const w of words) {
    const t = process.hrtime.bigint();
    const res = await search(w);
    ns.push(Number(process.hrtime.bigint() - t));
    if (res.isError) {
      errors++;
      firstError ||= `${w}: ${res.content?.[0]?.text ?? ''}`.slice(0, 200);
    }
  }
}
console.log(JSON.stringify({ ns, errors, first_error: firstError }));
await client.close();
