import { describe, expect, it } from 'vitest';
import { devServerArgs, sdkExtraArgs, SEARCH_ATTRIBUTES } from '../../../server/embedded/temporal-dev-server.ts';

describe('Temporal dev server arguments', () => {
  it('persists to SQLite in WAL mode, registers the search attributes and enables updates', () => {
    const args = devServerArgs({ dbFile: '/d/temporal.db', namespace: 'default', port: 7233, uiPort: 8233 });
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args.join(' ')).toContain('--db-filename /d/temporal.db --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal');
    expect(args.join(' ')).toContain('--ui-port 8233');
    for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(args).toContain(`${name}=Keyword`);
    expect(args).toContain('frontend.enableUpdateWorkflowExecution=true');
    expect(args).toContain('frontend.enableExecuteMultiOperation=true');
    expect(args).toContain('history.transferProcessorMaxPollRPS=1000');
    expect(args).not.toContain('--namespace');
  });

  it('runs headless without a UI port and creates a non-default namespace', () => {
    const args = devServerArgs({ namespace: 'gw', port: 1 });
    expect(args).toContain('--headless');
    expect(args.join(' ')).toContain('--namespace gw');
    expect(args).not.toContain('--db-filename');
  });

  it('hands the SDK download only the flags it does not set itself', () => {
    const extra = sdkExtraArgs(7233, 8233);
    for (const owned of ['--ip', '--port', '--log-level', '--headless', '--ui-port', '127.0.0.1', '7233', '8233', 'warn']) expect(extra).not.toContain(owned);
    expect(extra.filter((a) => a === '--search-attribute')).toHaveLength(Object.keys(SEARCH_ATTRIBUTES).length);
    expect(extra).toContain('frontend.enableExecuteMultiOperation=true');
    expect(extra.length % 2).toBe(0);
  });
});
