// Provisions what embedded mode needs that npm cannot install: the Temporal CLI binary.
import { resolveTemporalCli } from '../../server/embedded/temporal-cli.ts';

export async function setupCommand(_args: string[]): Promise<number> {
  const cli = await resolveTemporalCli({
    explicitPath: process.env.TEMPORAL_CLI_PATH || undefined,
    progress: (line) => process.stderr.write(line + '\n'),
  });
  process.stdout.write(`Temporal CLI: ${cli}\n`);
  return 0;
}
