// Data for Services → Import: a vendor's OpenAPI document checked (dry run) or saved as a draft,
// the draft's review saved, and publishing. The review itself is pure (import-review.ts).
import { ApiError, api, unwrap, type components } from '../client.ts';
import { messageOf } from '../errors.ts';
import { problemsOf } from './registry.ts';

export type ImportReport = components['schemas']['ImportReport'];
export type ImportPreview = components['schemas']['ImportPreview'];
export type ImportSaved = components['schemas']['ImportSaved'];
export type TemplateChanges = NonNullable<ImportSaved['changes']>;

export interface ImportRequest {
  /** JSON or YAML text as pasted or read from the file; the server parses it. */
  document: string;
  key?: string;
  scope: 'org' | 'user';
}

export const checkImport = (req: ImportRequest) => unwrap(api.POST('/v1/templates/import', { body: { ...req, dry_run: true } })) as Promise<ImportPreview>;
export const importDraft = (req: ImportRequest) => unwrap(api.POST('/v1/templates/import', { body: { ...req, dry_run: false } })) as Promise<ImportSaved>;
export const publishTemplate = (id: string) => unwrap(api.POST('/v1/templates/{id}/publish', { params: { path: { id } } }));

// The report and changes of a template's last import, for its review page (the API answers them
// only once, with the import). Kept in memory for this tab only.
export interface LastImport {
  report: ImportReport;
  changes?: TemplateChanges | undefined;
}
const lastImports = new Map<string, LastImport>();
export const rememberImport = (id: string, last: LastImport) => void lastImports.set(id, last);
export const lastImportOf = (id: string): LastImport | undefined => lastImports.get(id);

/**
 * A refused import, check, save or publish in words: the gateway's message, why a document was
 * refused (`details.reason`: not_openapi, external_ref, …) and the first problems of a 422 by path.
 */
export function importErrorText(err: unknown): string {
  if (!(err instanceof ApiError)) return messageOf(err);
  const reason = typeof err.details?.['reason'] === 'string' ? ` (${err.details['reason']})` : '';
  const problems = problemsOf(err.details).slice(0, 5).map((p) => `${p.path}: ${p.message}`);
  return [err.message + reason, ...problems].join(' — ');
}
