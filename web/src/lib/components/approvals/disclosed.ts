import type { Disclosed } from '#lib/api.ts';
/** `Label: value` text of one disclosed field. */
export function disclosedText(d: Disclosed): string {
  if (d.error) return 'could not be extracted';
  return typeof d.value === 'string' ? d.value : JSON.stringify(d.value);
}
