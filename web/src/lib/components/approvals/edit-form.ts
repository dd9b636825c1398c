// The "Edit before allowing" form's values (all text, as inputs hold them) and the edit they make:
// only the fields a person changed, typed as the schema says; a service action's `params` or a
// raw request's `request`. `error: null` means nothing changed yet.
import type { EditBody, EditForm } from '#lib/api.ts';

export type FieldValues = Record<string, string>;
export type FormEdit = { ok: true; body: EditBody } | { ok: false; error: string | null };

const text = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

export function initialValues(form: EditForm): FieldValues {
  if (form.kind === 'request' && form.request) {
    return { method: form.request.method, url: form.request.url, headers: '', body: form.request.body === null ? '' : JSON.stringify(form.request.body, null, 2) };
  }
  return Object.fromEntries((form.parameters ?? []).filter((p) => !p.redacted).map((p) => [p.name, text(p.value)]));
}

/** A field's text as the schema's type; an error names the field. */
function typed(type: string, name: string, raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (raw === '') return { ok: true, value: null };
  if (type === 'integer' || type === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) return { ok: false, error: `${name} must be ${type === 'integer' ? 'a whole number' : 'a number'}` };
    return { ok: true, value: n };
  }
  if (type === 'boolean') return { ok: true, value: raw === 'true' };
  if (type === 'object' || type === 'array') {
    try {
      return { ok: true, value: JSON.parse(raw) as unknown };
    } catch {
      return { ok: false, error: `${name} is not valid JSON` };
    }
  }
  return { ok: true, value: raw };
}

export function editOfForm(form: EditForm, values: FieldValues): FormEdit {
  const initial = initialValues(form);
  if (form.kind === 'params') {
    const params: Record<string, unknown> = {};
    for (const p of form.parameters ?? []) {
      const raw = values[p.name] == null ? '' : String(values[p.name]);
      if (p.redacted || raw === (initial[p.name] ?? '')) continue;
      const v = typed(p.type, p.name, raw);
      if (!v.ok) return v;
      params[p.name] = v.value;
    }
    return Object.keys(params).length ? { ok: true, body: { params } } : { ok: false, error: null };
  }
  const request: NonNullable<EditBody['request']> = {};
  if (values.method !== initial.method) request.method = values.method;
  if (values.url !== initial.url) request.url = values.url;
  if ((values.headers ?? '').trim() !== '') {
    try {
      const h = JSON.parse(values.headers!) as unknown;
      if (!h || typeof h !== 'object' || Array.isArray(h) || Object.values(h).some((x) => typeof x !== 'string')) return { ok: false, error: 'Headers must be a JSON object of strings' };
      request.headers = h as Record<string, string>;
    } catch {
      return { ok: false, error: 'Headers are not valid JSON' };
    }
  }
  if (values.body !== initial.body) {
    try {
      request.body = values.body === '' ? null : (JSON.parse(values.body!) as unknown);
    } catch {
      return { ok: false, error: 'The body is not valid JSON' };
    }
  }
  return Object.keys(request).length ? { ok: true, body: { request } } : { ok: false, error: null };
}
