import { describe, expect, it } from 'vitest';
import { firstBlockedFolder } from '../../../server/embedded/embedded-postgres.ts';

const pg = { uid: 999, gid: 999 };
const dir = (path: string, mode: number, uid = 0, gid = 0) => ({ path, mode, uid, gid });

describe('firstBlockedFolder (can the postgres user reach DATA_DIR?)', () => {
  it('passes folders others may enter', () => {
    expect(firstBlockedFolder([dir('/', 0o755), dir('/var', 0o755), dir('/var/lib/gw', 0o711)], pg)).toBeNull();
  });

  it('names the first private folder on the way', () => {
    expect(firstBlockedFolder([dir('/', 0o755), dir('/root', 0o700), dir('/root/x', 0o755)], pg)?.path).toBe('/root');
    expect(firstBlockedFolder([dir('/', 0o755), dir('/tmp', 0o1777), dir('/tmp/tmp.abc', 0o700)], pg)?.path).toBe('/tmp/tmp.abc');
  });

  it('uses the owner and group bits for the postgres user and group', () => {
    expect(firstBlockedFolder([dir('/srv', 0o700, 999, 0)], pg)).toBeNull();
    expect(firstBlockedFolder([dir('/srv', 0o750, 0, 999)], pg)).toBeNull();
    expect(firstBlockedFolder([dir('/srv', 0o604, 999, 0)], pg)?.path).toBe('/srv'); // owner without x, even if others have r
  });
});
