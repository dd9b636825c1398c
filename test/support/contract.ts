// The REST contract, enforced in every integration test: each response the test HTTP helper
// receives is checked against the gateway's own GET /v1/openapi.json — the status must be listed
// for that operation and a JSON body must match its schema — so a handler drifting from the
// document fails the test that exercised it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDoc {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, unknown> };
}

export interface ContractChecker {
  /** Throws when the response is not what the document promises for this request. */
  check(method: string, url: string, status: number, contentType: string | null, text: string): void;
  /** How many responses were checked against an operation (for the coverage test). */
  checked: Map<string, Set<number>>;
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export function contractChecker(doc: OpenApiDoc): ContractChecker {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(doc as object, 'openapi');
  const validators = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    let v = validators.get(pointer);
    if (!v) validators.set(pointer, (v = ajv.compile({ $ref: `openapi#${pointer}` })));
    return v;
  };
  const routes = Object.entries(doc.paths).map(([template, item]) => ({
    template,
    item,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const envelope = ajv.compile({ $ref: 'openapi#/components/schemas/ErrorEnvelope' });
  const checked = new Map<string, Set<number>>();

  return {
    checked,
    check(method, url, status, contentType, text) {
      const path = new URL(url, 'http://x').pathname;
      const m = method.toLowerCase();
      const route = routes.find((r) => r.pattern.test(path) && r.item[m]);
      const where = `${method} ${path} → ${status}`;
      if (!route) {
        // Not an operation: an unknown /v1 path or method is the enveloped 404.
        if (path.startsWith('/v1/') && status !== 404 && status !== 400 && status !== 431) {
          throw new Error(`contract: ${where}, but the document has no operation for it`);
        }
        if (path.startsWith('/v1/') && !envelope(JSON.parse(text))) throw new Error(`contract: ${where}: not the error envelope: ${text.slice(0, 300)}`);
        return;
      }
      const op = route.item[m]!;
      const response = op.responses[String(status)];
      if (!response) {
        throw new Error(`contract: ${where} (${op.operationId}): status ${status} is not in the document (listed: ${Object.keys(op.responses).join(', ')}); body: ${text.slice(0, 300)}`);
      }
      const seen = checked.get(op.operationId) ?? new Set<number>();
      seen.add(status);
      checked.set(op.operationId, seen);
      if (!response.content) {
        if (text !== '' && status !== 303) throw new Error(`contract: ${where} (${op.operationId}): the document promises no body, got: ${text.slice(0, 300)}`);
        return;
      }
      const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
      const documented = Object.keys(response.content);
      // Files carry the upstream's own type (documented as application/octet-stream).
      if (documented.includes('application/octet-stream')) return;
      if (!documented.includes(media)) {
        throw new Error(`contract: ${where} (${op.operationId}): content type ${media || 'none'}, documented: ${documented.join(', ')}`);
      }
      if (!/^application\/([a-z.+-]*\+)?json$/.test(media) || !response.content[media]?.schema) return;
      const v = validator(`/paths/${escapePointer(route.template)}/${m}/responses/${status}/content/${escapePointer(media)}/schema`);
      if (!v(JSON.parse(text))) {
        const problems = (v.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
        throw new Error(`contract: ${where} (${op.operationId}): the body does not match the document:\n  ${problems.join('\n  ')}\nbody: ${text.slice(0, 500)}`);
      }
    },
  };
}
