// The approval-edit service on its own: its stores, chain reader and coverage check are fakes given
// as arguments; the request is sealed and opened by the real vault keyring, and its keys are the
// real permission keys. What is judged here is the service's own logic — "only narrows", who may
// grant a wider key, what the edit form shows — without PostgreSQL or Temporal.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { httpPermissionKey, riskForHttpMethod } from '../../../core/permissions/keys.ts';
import { createApprovalEdits } from '../../../server/approvals/edits.ts';
import type { Principal } from '../../../server/auth/principal.ts';
import type { Prepared, RawHttpInput } from '../../../server/calls/prepare.ts';
import { decryptEditedRequest } from '../../../server/calls/stored-call.ts';
import type { CallRow } from '../../../server/calls/store.ts';
import { AppError } from '../../../server/errors.ts';
import { requestAad, type StoredRequest } from '../../../server/execution/stored-request.ts';
import type { IdentityRow } from '../../../server/identities/readers.ts';
import type { RegistryService } from '../../../server/registry/service.ts';
import { createVaultKeyring } from '../../../server/vault/keyring.ts';

const keyring = createVaultKeyring(randomBytes(32));
const ORG = randomUUID();
const USER = randomUUID();
const AGENT = randomUUID();
const RESOLVER_AGENT = randomUUID();

const identity = (id: string, kind: IdentityRow['kind']) => ({ id, kind, org_id: ORG, user_id: USER, parent_id: kind === 'user' ? null : USER, status: 'active' }) as IdentityRow;
const identities = new Map<string, IdentityRow>([USER, AGENT, RESOLVER_AGENT].map((id) => [id, identity(id, id === USER ? 'user' : 'agent')]));

/** A pending raw call as the calls store keeps it: the request sealed under its call id. */
function storedCall(request: StoredRequest & { kind: 'http' }): CallRow {
  const id = randomUUID();
  return {
    id,
    org_id: ORG,
    user_id: USER,
    requester_id: AGENT,
    service: 'http',
    action: `${request.method} ${new URL(request.url).host}${new URL(request.url).pathname}`,
    permission_keys: [httpPermissionKey(request.method, request.url)],
    request_envelope: keyring.encryptShortLived(JSON.stringify(request), requestAad(id)),
    request_redacted: { method: request.method, url: request.url, headers: Object.keys(request.headers ?? {}), body: request.body ?? null },
  } as unknown as CallRow;
}

/** The preparer's raw-call derivation as far as the judge needs it: the request's own key, description and redaction. */
function prepareHttp(_p: Principal, input: RawHttpInput): Promise<Prepared> {
  const url = new URL(input.path);
  return Promise.resolve({
    instanceName: input.service,
    template: 'http',
    action: `${input.method} ${url.host}${url.pathname}`,
    runtime: 'http',
    risk: riskForHttpMethod(input.method),
    keys: [httpPermissionKey(input.method, url)],
    description: `${input.method} ${url.href}`,
    redacted: { method: input.method, url: url.href, headers: Object.keys(input.headers ?? {}), body: input.body ?? null },
    disclosed: [],
    conditions: [],
    stored: { kind: 'http', method: input.method, url: url.href, ...(input.headers ? { headers: input.headers } : {}), ...(input.body !== undefined ? { body: input.body } : {}) },
    verbose: false,
    instance: {} as Prepared['instance'],
  });
}

function service(calls: CallRow[], covered: (identityId: string, keys: readonly string[]) => boolean = () => false) {
  const asked: { identityId: string; keys: readonly string[] }[] = [];
  const edits = createApprovalEdits({
    calls: { getCall: async (id) => calls.find((c) => c.id === id) ?? null },
    covers: async (identityId, keys) => {
      asked.push({ identityId, keys });
      return covered(identityId, keys);
    },
    keyring,
    registry: {} as RegistryService,
    chains: { getChain: async (id: string) => (identities.has(id) ? [identities.get(id)!] : []) } as never,
    connections: { refOf: async () => Promise.reject(new Error('no connection in these cases')) },
    preparer: { prepareHttp, prepareAction: () => Promise.reject(new Error('raw calls only here')) },
  });
  return { edits, asked };
}

const failure = async (p: Promise<unknown>) => {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
};

describe('approval edits (fake stores)', () => {
  const original = { kind: 'http' as const, method: 'GET', url: 'https://api.example.test/items?limit=100', headers: { accept: 'application/json' } };

  it('takes an edit that narrows (same key), seals the edited request for the call and lists what changed', async () => {
    const call = storedCall(original);
    const { edits, asked } = service([call]);
    const edit = await edits.deriveEdit(USER, call.id, { kind: 'request', request: { url: 'https://api.example.test/items?limit=5' } });
    expect(edit.permissionKeys).toEqual(call.permission_keys);
    expect(edit.diff).toEqual([{ field: 'url', before: original.url, after: 'https://api.example.test/items?limit=5' }]);
    expect(decryptEditedRequest(keyring, call.id, edit.envelope)).toMatchObject({ kind: 'http', url: 'https://api.example.test/items?limit=5', headers: original.headers });
    // Nothing beyond the original keys: no coverage question was asked.
    expect(asked).toEqual([]);
  });

  it('refuses an edit that widens the request for a person, without asking the rules', async () => {
    const call = storedCall(original);
    const { edits, asked } = service([call], () => true);
    const err = await failure(edits.deriveEdit(USER, call.id, { kind: 'request', request: { method: 'DELETE' } }));
    expect(err.code).toBe('edit_widens_request');
    expect(err.details).toMatchObject({ key: httpPermissionKey('DELETE', original.url), original_keys: call.permission_keys });
    expect(asked).toEqual([]);
  });

  it('lets an agent resolver widen only to keys its own rules cover', async () => {
    const call = storedCall(original);
    const wider = httpPermissionKey('DELETE', original.url);
    const grants = service([call], (id, keys) => id === RESOLVER_AGENT && keys.includes(wider));
    const edit = await grants.edits.deriveEdit(RESOLVER_AGENT, call.id, { kind: 'request', request: { method: 'DELETE' } });
    expect(edit.permissionKeys).toEqual([wider]);
    expect(grants.asked).toEqual([{ identityId: RESOLVER_AGENT, keys: [wider] }]);
    const refuses = service([call], () => false);
    expect((await failure(refuses.edits.deriveEdit(RESOLVER_AGENT, call.id, { kind: 'request', request: { method: 'DELETE' } }))).code).toBe('edit_widens_request');
  });

  it('refuses an edit that changes nothing, and a call it does not know', async () => {
    const call = storedCall(original);
    const { edits } = service([call]);
    const same = await failure(edits.deriveEdit(USER, call.id, { kind: 'request', request: { url: original.url } }));
    expect(same).toMatchObject({ code: 'invalid_request' });
    expect(same.details).toMatchObject({ field: 'request' });
    expect((await failure(edits.deriveEdit(USER, randomUUID(), { kind: 'request', request: { method: 'GET' } }))).code).toBe('not_found');
  });

  it('shows a raw call as the approver may edit it: method, URL, header names only, body', async () => {
    const call = storedCall({ ...original, method: 'POST', headers: { authorization: 'Bearer s3cr3t-token', accept: 'application/json' }, body: { name: 'x' } });
    const { edits } = service([call]);
    const form = await edits.editForm(call.id);
    expect(form).toEqual({ kind: 'request', editable: true, request: { method: 'POST', url: original.url, headers: ['authorization', 'accept'], body: { name: 'x' } } });
    expect(JSON.stringify(form)).not.toContain('s3cr3t-token');
  });
});
