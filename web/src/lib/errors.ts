import { ApiError } from './api.ts';

/** A sentence for a person from whatever failed (`fallback` when it carries none). */
export function messageOf(err: unknown, fallback = 'Something went wrong.'): string {
  return err instanceof Error ? err.message : fallback;
}

/**
 * The message of an error that is about one field of a form (the gateway names it in
 * `details.field`, or in the path of a validation issue), else null: the form shows it at that
 * field instead of above the form.
 */
export function fieldErrorOf(err: unknown, field: string): string | null {
  if (!(err instanceof ApiError) || !err.details) return null;
  const issues = Array.isArray(err.details['issues']) ? (err.details['issues'] as { path?: unknown; message?: unknown }[]) : [];
  if (err.details['field'] === field) return err.message;
  const issue = issues.find((i) => i.path === field);
  return issue ? `${field.replace('_', ' ')} ${String(issue.message)}` : null;
}
