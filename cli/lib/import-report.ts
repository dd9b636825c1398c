// `gateway services import`: the import's report as people read it, tables of what was skipped,
// what needs review and what a re-import changes. Pure text, no I/O.
import { clip, table } from './format.ts';

interface Report {
  source_format: string;
  key: string;
  operations: number;
  actions: number;
  skipped: Array<{ method: string; path: string; reason: string }>;
  warnings: Array<{ message: string; method?: string | undefined; path?: string | undefined }>;
}
interface Changes {
  added: string[];
  removed: string[];
  changed: Array<{ action: string; fields: string[] }>;
}

export function importReportText(title: string, report: Report, changes?: Changes): string {
  const lines = [
    `${title} (${report.source_format}) → service key ${report.key}: ${report.operations} operations, ${report.actions} actions, ${report.skipped.length} skipped, ${report.warnings.length} warnings`,
  ];
  if (report.skipped.length > 0) {
    lines.push('', 'Skipped:', table(['METHOD', 'PATH', 'REASON'], report.skipped.map((s) => [s.method, clip(s.path, 60), clip(s.reason, 110)])));
  }
  if (report.warnings.length > 0) {
    lines.push('', 'To review:', table(['METHOD', 'PATH', 'WARNING'], report.warnings.map((w) => [w.method ?? '', clip(w.path ?? '', 60), clip(w.message, 110)])));
  }
  if (changes) {
    const rows = [
      ...changes.added.map((a) => ['added', a, '']),
      ...changes.removed.map((a) => ['removed', a, '']),
      ...changes.changed.map((c) => ['changed', c.action, c.fields.join(', ')]),
    ];
    lines.push('', rows.length > 0 ? `Changes from the current template:\n${table(['CHANGE', 'ACTION', 'FIELDS'], rows)}` : 'No action changed from the current template.');
  }
  return lines.join('\n');
}
