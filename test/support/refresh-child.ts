// A second OS process for the single-flight refresh test: its own pool and connection service on
// the same database. Prints "ready", waits for a line on stdin, then asks for the token N times
// concurrently and prints the tokens it got as one JSON line.
import { createConnectionService } from '../../server/connections/service.ts';
import { createDatabasePool } from '../../server/db/pool.ts';
import { createLogger } from '../../server/logger.ts';
import { createVaultKeyring } from '../../server/vault/keyring.ts';
import { createVaultService } from '../../server/vault/service.ts';

const [databaseUrl, masterKey, connectionId, publicUrl, n] = process.argv.slice(2);
const pool = await createDatabasePool(databaseUrl!, { maxPoolSize: 12 });
const keyring = createVaultKeyring(Buffer.from(masterKey!, 'base64'));
const service = createConnectionService({ pool, keyring, vault: createVaultService({ pool, keyring }), publicUrl: publicUrl!, logger: createLogger('silent') });
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  void Promise.all(Array.from({ length: Number(n) }, () => service.getFreshAccessToken(connectionId!))).then(
    async (tokens) => {
      process.stdout.write(JSON.stringify(tokens.map((t) => t.accessToken)) + '\n');
      await pool.end();
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(String(err) + '\n');
      process.exit(1);
    },
  );
});
