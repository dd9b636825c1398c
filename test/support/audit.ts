// Every audit entry GET /v1/audit returns for a query, paging through next_cursor (200 a page):
// what an export or a page is compared against.
import { expect } from 'vitest';
import type { TestGateway } from './gateway.ts';

export async function auditEntries(as: ReturnType<TestGateway['as']>, query: string): Promise<{ id: number }[]> {
  const out: { id: number }[] = [];
  let cursor: string | null = null;
  do {
    const r = await as('GET', `/v1/audit?${query}&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status).toBe(200);
    out.push(...r.body.entries);
    cursor = r.body.next_cursor;
  } while (cursor);
  return out;
}
