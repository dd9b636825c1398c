import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, csvField, csvHeader, csvLine, exportFileName, jsonLine, type ExportEntry } from '../../../core/audit/export-format.ts';

const entry: ExportEntry = {
  id: 7,
  at: '2026-01-02T03:04:05.000Z',
  event: 'call.called',
  org_id: 'o',
  user_id: 'u1',
  user_name: 'Dana',
  actor_id: null,
  actor_name: null,
  identity_chain: ['a1', 'u1'],
  identity_chain_names: ['release bot, v2', null],
  service: 'widgets',
  action: 'get_item',
  permission_keys: ['widgets:get_item', 'secret:K:h'],
  decision: 'covered',
  call_id: null,
  approval_id: null,
  execution_id: null,
  http_status_code: 200,
  details: { note: 'a, "quoted"\nline' },
  request_id: 'r1',
};

describe('audit export lines', () => {
  it('quotes separators, quotes and line breaks; leaves plain text alone; null is empty', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
  });

  it('keeps spreadsheet formulas from running', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField(-3)).toBe('-3'); // numbers are not text
  });

  it('writes one CRLF row per entry under a header naming every column; names sit beside their ids, the chain\'s as JSON', () => {
    expect(csvHeader()).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    const line = csvLine(entry);
    expect(line.endsWith('\r\n')).toBe(true);
    expect(line).toBe(
      '7,2026-01-02T03:04:05.000Z,call.called,u1,Dana,,,a1 u1,"[""release bot, v2"",null]",widgets,get_item,widgets:get_item secret:K:h,covered,,,,200,r1,' +
        '"{""note"":""a, \\""quoted\\""\\nline""}"\r\n',
    );
  });

  it('JSON Lines is the entry object, one per line', () => {
    const line = jsonLine(entry);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toEqual(entry);
  });

  it('names the file after its filters with safe characters only', () => {
    const name = exportFileName('csv', { service: 'git hub/x', action: undefined, event: 'call.called' }, new Date('2026-01-02T03:04:05.678Z'));
    expect(name).toBe('audit_service-git_hub_x_event-call.called_2026-01-02T030405Z.csv');
  });
});
