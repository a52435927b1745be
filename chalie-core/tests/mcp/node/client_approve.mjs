// Calls a write left at `ask` on a chalie MCP server with the official
// TypeScript SDK client (`@modelcontextprotocol/client`) pinned to protocol
// 2026-07-28, whose user answers the approval question the server sends (an
// input-required result), and writes what it saw to a JSON report for the
// Rust test to check.
//
// Usage: node client_approve.mjs URL ORDER (approve|refuse|no-elicitation) REPORT

import { writeFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, order, answer, report] = process.argv.slice(2);
const elicits = answer !== 'no-elicitation';
const asked = [];

const client = new Client(
    { name: 'chalie-interop', version: '1.0.0' },
    {
        capabilities: elicits ? { elicitation: { form: {} } } : {},
        versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
);
if (elicits) {
    client.setRequestHandler('elicitation/create', async (request) => {
        asked.push({ message: request.params.message });
        return { action: 'accept', content: { approve: answer === 'approve' } };
    });
}
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const result = await client.callTool({ name: 'cancel_order', arguments: { order_id: order } });
const text = result.content.filter((block) => block.type === 'text').map((block) => block.text).join('');
writeFileSync(report, JSON.stringify({ is_error: Boolean(result.isError), text, asked }, null, 2));
await client.close();
