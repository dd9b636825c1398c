import { describe, expect, it } from 'vitest';
import { databaseUrlError, listenError, portInUseError, temporalAddressError } from '../../../server/embedded/startup-error.ts';
import { claimOf, ownerKey } from '../../../server/temporal/queue-owner.ts';

const URL_WITH_SECRET = 'postgres://gateway:hunter2@db.internal:6543/gateway';

describe('one-line start-up errors', () => {
  it('names the port variable', () => {
    expect(portInUseError('TEMPORAL_PORT', 7233).message).toBe('TEMPORAL_PORT 7233 is in use by another process: set TEMPORAL_PORT to a free port');
    expect(portInUseError('TEMPORAL_PORT', 7233).exitCode).toBe(78);
    expect(listenError('PORT', 80, undefined, { code: 'EACCES' })?.message).toMatch(/^PORT 80 may not be bound/);
    expect(listenError('PORT', 8080, '10.9.9.9', { code: 'EADDRNOTAVAIL' })?.message).toMatch(/^HOST 10\.9\.9\.9 is not an address/);
    expect(listenError('PORT', 8080, undefined, new Error('other'))).toBeNull();
    // The metrics listener names its own variables.
    expect(listenError('METRICS_PORT', 9464, '10.9.9.9', { code: 'EADDRNOTAVAIL' }, 'METRICS_HOST')?.message).toBe('METRICS_HOST 10.9.9.9 is not an address of this machine: set METRICS_HOST to one of its addresses');
    expect(listenError('METRICS_PORT', 9464, '127.0.0.1', { code: 'EADDRINUSE' }, 'METRICS_HOST')?.message).toMatch(/^METRICS_PORT 9464 is in use/);
  });

  it('names DATABASE_URL by host and port only, through wrapped causes', () => {
    const refused = databaseUrlError(URL_WITH_SECRET, Object.assign(new Error('x'), { code: 'ECONNREFUSED' }));
    expect(refused?.message).toBe('DATABASE_URL: no PostgreSQL answers at db.internal:6543/gateway (ECONNREFUSED): check DATABASE_URL');
    const wrapped = databaseUrlError(URL_WITH_SECRET, new Error('wrapped', { cause: Object.assign(new Error('auth'), { code: '28P01' }) }));
    expect(wrapped?.message).toBe('DATABASE_URL: PostgreSQL at db.internal:6543/gateway refused the password (28P01): check DATABASE_URL');
    expect(databaseUrlError(URL_WITH_SECRET, Object.assign(new Error('syntax'), { code: '42601' }))).toBeNull();
    expect(JSON.stringify([refused?.message, wrapped?.message])).not.toContain('hunter2');
  });

  it('names TEMPORAL_ADDRESS with the first line of the reason', () => {
    expect(temporalAddressError('temporal:7233', new Error('Failed to connect before the deadline\nmore')).message).toBe(
      'TEMPORAL_ADDRESS temporal:7233: no Temporal frontend answers (Failed to connect before the deadline): check TEMPORAL_ADDRESS',
    );
  });
});

describe('task queue ownership', () => {
  it('is free, ours or taken', () => {
    expect(claimOf(undefined, 'a')).toBe('free');
    expect(claimOf('', 'a')).toBe('free');
    expect(claimOf('a', 'a')).toBe('ours');
    expect(claimOf('b', 'a')).toBe('taken');
    expect(ownerKey('gateway-actions')).toBe('agent-gateway.task-queue.gateway-actions');
  });
});
