// `gateway vault rotate-master-key`: re-wraps every vault data key under a new master key.
//
// Current key: GATEWAY_MASTER_KEY, else DATA_DIR/master.key (embedded mode). New key:
// GATEWAY_NEW_MASTER_KEY, else 32 fresh random bytes. A key from the file is replaced in the file
// (the old one kept as master.key.previous); a key from the environment is printed once, for the
// operator to put into GATEWAY_MASTER_KEY. Stop every gateway process before rotating.
import { randomBytes } from 'node:crypto';
import { copyFile, chmod, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { deriveKekId } from '../../core/vault/envelope.ts';
import { decodeMasterKey } from '../../server/config.ts';
import { createDatabasePool } from '../../server/db/pool.ts';
import { createLogger } from '../../server/logger.ts';
import { acquireDataDirLock, ensureDataDir } from '../../server/embedded/data-dir.ts';
import { startEmbeddedPostgres } from '../../server/embedded/embedded-postgres.ts';
import { createVaultKeyring } from '../../server/vault/keyring.ts';
import { hasVaultTables, rotateMasterKey } from '../../server/vault/rotate.ts';
import { configOrExit, readTextIfExists } from '../shared.ts';

const USAGE = `Usage:
  gateway vault rotate-master-key   re-wrap every vault data key under a new master key
                                    (new key from GATEWAY_NEW_MASTER_KEY, or generated)`;

export async function vaultCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'rotate-master-key' && rest.length === 0) return rotateMasterKeyCommand();
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(USAGE + '\n');
    return sub === undefined ? 2 : 0;
  }
  process.stderr.write(`gateway vault: unknown arguments "${args.join(' ')}"\n\n${USAGE}\n`);
  return 2;
}

async function readKeyFile(file: string): Promise<Buffer | null> {
  const text = await readTextIfExists(file);
  if (text === null) return null;
  const key = decodeMasterKey(text);
  if (!key) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}

async function rotateMasterKeyCommand(): Promise<number> {
  const config = configOrExit();
  // Logs go to stderr: stdout carries the result (and, in environment mode, the new key).
  const logger = createLogger(config.logLevel, process.stderr);
  const fail = (message: string, code = 1) => {
    process.stderr.write(`gateway vault: ${message}\n`);
    return code;
  };

  const rawNew = process.env.GATEWAY_NEW_MASTER_KEY?.trim();
  const suppliedNew = rawNew ? decodeMasterKey(rawNew) : null;
  if (rawNew && !suppliedNew) {
    return fail('invalid configuration: GATEWAY_NEW_MASTER_KEY must be 32 bytes as base64 or 64 hex characters', 78);
  }

  const keyFile = path.join(config.dataDir, 'master.key');
  const fromFile = config.masterKey === undefined;
  const currentKey = config.masterKey ?? (await readKeyFile(keyFile));
  if (!currentKey) return fail(`no master key to rotate: GATEWAY_MASTER_KEY is unset and ${keyFile} does not exist`);
  const newKey = suppliedNew ?? randomBytes(32);
  if (deriveKekId(newKey) === deriveKekId(currentKey)) return fail('the new master key is the current one');

  const cleanups: Array<() => Promise<void>> = [];
  try {
    // DATA_DIR is ours alone while we rotate: a gateway running on it would keep the old key.
    if (!config.databaseUrl || fromFile) {
      await ensureDataDir(config.dataDir);
      cleanups.unshift(await acquireDataDirLock(config.dataDir));
    }
    let url = config.databaseUrl;
    if (!url) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, logger });
      cleanups.unshift(pg.stop);
      url = pg.url;
    }
    const pool = await createDatabasePool(url, { maxPoolSize: 2 });
    cleanups.unshift(() => pool.end());

    if (!(await hasVaultTables(pool))) return fail('the database has no vault tables yet; run `gateway migrate` first');

    // File mode: the new key is on disk before any row depends on it, so no crash can lose it.
    const nextFile = `${keyFile}.next`;
    if (fromFile) await writeFile(nextFile, newKey.toString('base64') + '\n', { mode: 0o600 });

    let result;
    try {
      result = await rotateMasterKey(pool, createVaultKeyring(currentKey), newKey);
    } catch (err) {
      if (fromFile) await rm(nextFile, { force: true });
      throw err;
    }

    const summary =
      `re-wrapped ${result.secretVersions} secret version(s), ${result.connectionEnvelopes} connection envelope(s) and ${result.otherEnvelopes} other envelope(s) ` +
      `under master key ${result.kekId}` + (result.skipped ? ` (${result.skipped} already under it)` : '') + '\n';
    if (fromFile) {
      const previousFile = `${keyFile}.previous`;
      await copyFile(keyFile, previousFile);
      await chmod(previousFile, 0o600);
      await chmod(nextFile, 0o600);
      await rename(nextFile, keyFile); // atomic: master.key is always the old or the new key
      process.stdout.write(summary + `wrote the new key to ${keyFile}; the old one is in ${previousFile}\n`);
    } else {
      process.stdout.write(
        summary +
          `new master key (shown once): ${newKey.toString('base64')}\n` +
          'Set GATEWAY_MASTER_KEY to this value and restart every gateway process: the old key no longer opens the vault.\n',
      );
    }
    return 0;
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}
