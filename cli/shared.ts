import { readFile } from 'node:fs/promises';
import { ConfigError, loadConfig, type Config } from '../server/config.ts';

/** Loads configuration or exits with one line that names the bad variable. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gateway: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

/** A file's text, or null when it does not exist (any other error is thrown). */
export async function readTextIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
