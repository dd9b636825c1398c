import { describe, expect, it } from 'vitest';
import type { EditForm } from '../../../web/src/lib/api.ts';
import { editOfForm, initialValues } from '../../../web/src/lib/components/approvals/edit-form.ts';

const action: EditForm = {
  kind: 'params',
  editable: true,
  parameters: [
    { name: 'payment_intent', in: 'query', required: true, type: 'string', redacted: false, value: 'pi_1' },
    { name: 'amount', in: 'query', required: false, type: 'integer', redacted: false, value: 5000 },
    { name: 'meta', in: 'body', required: false, type: 'object', redacted: false },
    { name: 'pin', in: 'body', required: false, type: 'string', redacted: true },
  ],
};
const raw: EditForm = { kind: 'request', editable: true, request: { method: 'POST', url: 'https://bank.test/transfer', headers: ['X-Trace'], body: { amount: 5000 } } };

describe('the "Edit before allowing" form', () => {
  it('makes no edit until a field changes, then only the changed fields, typed by the schema', () => {
    const v = initialValues(action);
    expect(v).toEqual({ payment_intent: 'pi_1', amount: '5000', meta: '' });
    expect(editOfForm(action, v)).toEqual({ ok: false, error: null });
    expect(editOfForm(action, { ...v, amount: '50' })).toEqual({ ok: true, body: { params: { amount: 50 } } });
    expect(editOfForm(action, { ...v, amount: '' })).toEqual({ ok: true, body: { params: { amount: null } } });
    expect(editOfForm(action, { ...v, meta: '{"a":1}' })).toEqual({ ok: true, body: { params: { meta: { a: 1 } } } });
  });

  it('names the field whose text is not of its type', () => {
    expect(editOfForm(action, { ...initialValues(action), amount: '5.5' })).toEqual({ ok: false, error: 'amount must be a whole number' });
    expect(editOfForm(action, { ...initialValues(action), meta: '{' })).toEqual({ ok: false, error: 'meta is not valid JSON' });
  });

  it('edits a raw request by method, URL, headers and JSON body', () => {
    const v = initialValues(raw);
    expect(editOfForm(raw, v)).toEqual({ ok: false, error: null });
    expect(editOfForm(raw, { ...v, body: '{"amount": 50}' })).toEqual({ ok: true, body: { request: { body: { amount: 50 } } } });
    expect(editOfForm(raw, { ...v, method: 'PUT', headers: '{"X-Trace":"t"}' })).toEqual({ ok: true, body: { request: { method: 'PUT', headers: { 'X-Trace': 't' } } } });
    expect(editOfForm(raw, { ...v, headers: '[1]' })).toEqual({ ok: false, error: 'Headers must be a JSON object of strings' });
    expect(editOfForm(raw, { ...v, body: '{nope' })).toEqual({ ok: false, error: 'The body is not valid JSON' });
  });
});
