// The integration helper's contract check fails on drift: an unlisted status, a body that does
// not match, a wrong content type. Checked here against the real document, built offline.
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../server/app.ts';
import { contractChecker, type OpenApiDoc } from '../../support/contract.ts';

const checker = contractChecker(openApiDocument() as unknown as OpenApiDoc);
const json = 'application/json; charset=utf-8';
const identity = {
  id: '5f221c07-8196-4d92-8a1c-5d5ebb246f4c',
  kind: 'agent',
  name: 'a',
  org_id: '5f221c07-8196-4d92-8a1c-5d5ebb246f4c',
  parent_id: '5f221c07-8196-4d92-8a1c-5d5ebb246f4c',
  user_id: '5f221c07-8196-4d92-8a1c-5d5ebb246f4c',
  auto_call_on_approve: true,
  status: 'active',
  created_at: '2026-11-22T21:43:43.405Z',
};
const path = `/v1/identities/${identity.id}`;

describe('contract checker', () => {
  it('accepts a response the document describes', () => {
    expect(() => checker.check('GET', path, 200, json, JSON.stringify(identity))).not.toThrow();
    const envelope = { error: { code: 'not_found', message: 'identity not found' }, request_id: 'r-12345678' };
    expect(() => checker.check('GET', path, 404, json, JSON.stringify(envelope))).not.toThrow();
  });

  it('fails on a status the operation does not list', () => {
    expect(() => checker.check('GET', path, 409, json, '{}')).toThrow(/status 409 is not in the document/);
  });

  it('fails on a body with a missing, extra or mistyped field', () => {
    const { name: _name, ...missing } = identity;
    expect(() => checker.check('GET', path, 200, json, JSON.stringify(missing))).toThrow(/does not match/);
    expect(() => checker.check('GET', path, 200, json, JSON.stringify({ ...identity, secret: 'x' }))).toThrow(/does not match/);
    expect(() => checker.check('GET', path, 200, json, JSON.stringify({ ...identity, status: 'gone' }))).toThrow(/does not match/);
  });

  it('fails on an error code the operation does not declare, and on a wrong content type', () => {
    const conflict = { error: { code: 'rate_limited', message: 'x' }, request_id: 'r-12345678' };
    expect(() => checker.check('GET', path, 429, json, JSON.stringify(conflict))).toThrow(/not in the document/);
    const wrongCode = { error: { code: 'forbidden', message: 'x' }, request_id: 'r-12345678' };
    expect(() => checker.check('GET', path, 404, json, JSON.stringify(wrongCode))).toThrow(/does not match/);
    expect(() => checker.check('GET', path, 200, 'text/html', '<p>')).toThrow(/content type/);
  });

  it('fails on a /v1 response for which there is no operation (other than the 404 envelope)', () => {
    expect(() => checker.check('GET', '/v1/nothing-here', 200, json, '{}')).toThrow(/no operation/);
    const notFound = { error: { code: 'not_found', message: 'no route' }, request_id: 'r-12345678' };
    expect(() => checker.check('GET', '/v1/nothing-here', 404, json, JSON.stringify(notFound))).not.toThrow();
  });
});
