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
