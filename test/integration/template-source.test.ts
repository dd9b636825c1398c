// GET /v1/templates/{id}: a custom template with its document as text, for the dashboard's editor.
// YAML sent as text is kept as written (comments survive) and the template still compiles and
// lists; a document sent as an object comes back as equivalent YAML. Bad ids, other people's
// templates and agents are refused.
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { upstreamServiceDoc } from '../support/upstream.ts';

const YAML_TEXT = `# kept as written
openapi: 3.1.0
info: { title: Text doc, key: text_doc, version: "1" }
servers: [{ url: "http://127.0.0.1:9" }]
paths:
  /things:
    get:
      operationId: list_things
      summary: List things
      responses: { "200": { description: ok } }
`;

describe('GET /v1/templates/{id}', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'tess@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
    const a = await admin('POST', '/v1/identities/agents', { name: 'reader' });
    agent = gw.as(a.body.key.token);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('returns YAML text as it was sent; the template compiles, lists and is callable by name', async () => {
    const created = await admin('POST', '/v1/templates', { scope: 'org', document: YAML_TEXT });
    expect(created.status).toBe(201);
    const got = await admin('GET', `/v1/templates/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: created.body.id, key: 'text_doc', title: 'Text doc', tier: 'org', action_count: 1, source: YAML_TEXT });
    expect((await admin('GET', '/v1/templates')).body.templates.map((t: { key: string }) => t.key)).toContain('text_doc');
    expect((await admin('GET', '/v1/services/text_doc')).body.actions.map((x: { action: string }) => x.action)).toEqual(['list_things']);
    // A member of the org reads org templates too.
    expect((await member('GET', `/v1/templates/${created.body.id}`)).body.source).toBe(YAML_TEXT);
    // Replaced with new text: the new text comes back.
    const edited = YAML_TEXT.replace('List things', 'List all things');
    expect((await admin('PUT', `/v1/templates/${created.body.id}`, { document: edited })).status).toBe(200);
    expect((await admin('GET', `/v1/templates/${created.body.id}`)).body.source).toBe(edited);
  });

  it('returns a document sent as an object as equivalent YAML', async () => {
    const doc = upstreamServiceDoc('object_doc', 'http://127.0.0.1:9');
    const created = await admin('POST', '/v1/templates', { scope: 'org', document: doc });
    expect(created.status).toBe(201);
    const got = await admin('GET', `/v1/templates/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(parse(got.body.source)).toEqual(doc);
  });

  it('refuses a malformed id, an unknown one, another person\'s template and agents', async () => {
    const bad = await admin('GET', '/v1/templates/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect((await admin('GET', '/v1/templates/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const mine = await member('POST', '/v1/templates', { scope: 'user', document: YAML_TEXT.replace('text_doc', 'tess_doc') });
    expect(mine.status).toBe(201);
    expect((await member('GET', `/v1/templates/${mine.body.id}`)).status).toBe(200);
    expect((await admin('GET', `/v1/templates/${mine.body.id}`)).body.error.code).toBe('not_found');
    const asAgent = await agent('GET', `/v1/templates/${mine.body.id}`);
    expect(asAgent.status).toBe(403);
  });
});
