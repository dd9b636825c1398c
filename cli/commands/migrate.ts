import { migrate } from '../../server/db/migrate.ts';
import { createLogger } from '../../server/logger.ts';
import { chooseLogFormat } from '../../server/log-format.ts';
import { acquireDataDirLock, ensureDataDir } from '../../server/embedded/data-dir.ts';
import { startEmbeddedPostgres } from '../../server/embedded/embedded-postgres.ts';
import { configOrExit } from '../shared.ts';

export async function migrateCommand(_args: string[]): Promise<number> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel, undefined, chooseLogFormat(process.stdout.isTTY === true, config.logFormat));
  let stopPg: (() => Promise<void>) | undefined;
  let release: (() => Promise<void>) | undefined;
  let url = config.databaseUrl;
  if (!url) {
    await ensureDataDir(config.dataDir);
    release = await acquireDataDirLock(config.dataDir);
    const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, logger });
    stopPg = pg.stop;
    url = pg.url;
  }
  try {
    const applied = await migrate(url);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await stopPg?.();
    await release?.();
  }
}
