#!/usr/bin/env node
// The `gateway` command. Thin: parse arguments, call one function, print, exit with a status.

const HELP = `gateway — Agent Action Gateway

Usage:
  gateway serve [--role api|worker|all]   start the gateway (default role: all)
  gateway migrate                         apply database migrations and exit
  gateway setup                           provision the Temporal CLI for embedded mode
  gateway vault rotate-master-key         re-wrap the vault under a new master key
  gateway mcp                             MCP stdio shim: forwards JSON-RPC lines to <url>/mcp
  gateway mcp login [--url U]             sign in with OAuth and store MCP credentials
  gateway help                            show this help

Configuration comes from environment variables; see README.md.`;

async function main(argv: string[]): Promise<number> {
  const [command = 'help', ...rest] = argv;
  switch (command) {
    case 'serve':
      return (await import('./commands/serve.ts')).serveCommand(rest);
    case 'migrate':
      return (await import('./commands/migrate.ts')).migrateCommand(rest);
    case 'setup':
      return (await import('./commands/setup.ts')).setupCommand(rest);
    case 'vault':
      return (await import('./commands/vault.ts')).vaultCommand(rest);
    case 'mcp':
      return (await import('./commands/mcp.ts')).mcpCommand(rest);
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(HELP + '\n');
      return 0;
    default:
      process.stderr.write(`gateway: unknown command "${command}"\n\n${HELP}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (err: unknown) => {
    // Problems the operator must fix carry an exit code and a one-line message; bugs, a stack.
    const exitCode = (err as { exitCode?: unknown } | null)?.exitCode;
    if (typeof exitCode === 'number') {
      process.stderr.write(`gateway: ${(err as Error).message}\n`);
      process.exit(exitCode);
    }
    process.stderr.write(`gateway: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
