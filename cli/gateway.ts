#!/usr/bin/env node
// The `gateway` command: commander builds the commands, options and help; each command is a thin
// file in cli/commands/ (server-side commands are imported only when run, so the client stays quick).
import { Command, CommanderError } from 'commander';
import { agentsCommand } from './commands/agents.ts';
import { approvalsCommands } from './commands/approvals.ts';
import { auditCommand } from './commands/audit.ts';
import { callCommand } from './commands/call.ts';
import { completionCommand } from './commands/completion.ts';
import { loginCommands } from './commands/login.ts';
import { inviteCommand, membersCommand } from './commands/members.ts';
import { secretsCommand } from './commands/secrets.ts';
import { noticesCommand } from './commands/notices.ts';
import { servicesCommand } from './commands/services.ts';
import { mcpServersCommand } from './commands/mcp-servers.ts';
import { webCommand } from './commands/web.ts';
import { EXIT, EXIT_CODES_HELP } from './lib/errors.ts';

/** Runs a command body and records its exit status. */
const status = (code: number) => void (process.exitCode = code);

function serverCommands(program: Command): void {
  program
    .command('serve')
    .description('start the gateway (API, worker, or both)')
    .option('--role <role>', 'api, worker or all', 'all')
    .action(async (o: { role: string }) => status(await (await import('./commands/serve.ts')).serveCommand(['--role', o.role])));
  program
    .command('migrate')
    .description('apply database migrations and exit')
    .action(async () => status(await (await import('./commands/migrate.ts')).migrateCommand([])));
  program
    .command('setup')
    .description('provision the Temporal CLI for embedded mode')
    .action(async () => status(await (await import('./commands/setup.ts')).setupCommand([])));
  const vault = program.command('vault').description('vault maintenance (run with every gateway process stopped)');
  vault
    .command('rotate-master-key')
    .description('re-wrap the vault under a new master key (GATEWAY_NEW_MASTER_KEY, or generated)')
    .action(async () => status(await (await import('./commands/vault.ts')).vaultCommand(['rotate-master-key'])));

  const mcp = program
    .command('mcp')
    .description('MCP stdio shim: JSON-RPC lines on stdin go to <url>/mcp, replies to stdout')
    .addHelpText('after', '\nCredentials: GATEWAY_URL + GATEWAY_AGENT_KEY, else the file `gateway mcp login` writes\n($GATEWAY_CONFIG, else ~/.config/agent-gateway/credentials.json, mode 0600).')
    .helpCommand(true)
    .action(async () => status(await (await import('./commands/mcp.ts')).mcpCommand([])));
  mcp
    .command('login')
    .description('sign in with OAuth (code + PKCE) and store the agent credentials for the shim')
    .option('--url <url>', 'the gateway (default: GATEWAY_URL, or the stored credentials)')
    .option('--no-browser', 'print the sign-in URL without opening a browser')
    .option('--new-client', 'register a new OAuth client even when one is stored')
    .action(async (o: { url?: string; browser: boolean; newClient?: boolean }) => {
      const args = ['login', ...(o.url ? ['--url', o.url] : []), ...(o.browser ? [] : ['--no-browser']), ...(o.newClient ? ['--new-client'] : [])];
      status(await (await import('./commands/mcp.ts')).mcpCommand(args));
    });
}

export function buildProgram(): Command {
  const program = new Command('gateway')
    .description('Agent Action Gateway: call APIs through the gateway, decide approvals, run the server')
    .option('--profile <name>', 'which stored sign-in to use (default: $GATEWAY_PROFILE, else "default")')
    .option('--no-color', 'no colour (also: NO_COLOR=1; colour is only ever used on a terminal)')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
Credentials: GATEWAY_TOKEN or GATEWAY_AGENT_KEY (with GATEWAY_URL), else the person signed in with
\`gateway login\` (per --profile, ~/.config/agent-gateway/profiles.json, mode 0600), else the agent
signed in with \`gateway mcp login\`.

${EXIT_CODES_HELP}`,
    )
    .hook('preAction', (cmd) => {
      if (cmd.opts().color === false) process.env.NO_COLOR = '1';
    });
  loginCommands(program);
  program.addCommand(callCommand());
  approvalsCommands(program);
  program.addCommand(servicesCommand());
  program.addCommand(mcpServersCommand());
  program.addCommand(agentsCommand());
  program.addCommand(secretsCommand());
  program.addCommand(noticesCommand());
  program.addCommand(auditCommand());
  program.addCommand(membersCommand());
  program.addCommand(inviteCommand());
  program.addCommand(webCommand());
  serverCommands(program);
  program.addCommand(completionCommand(program));
  // Every command: usage errors exit 2 with one line, help exits 0.
  const configure = (c: Command) => {
    c.exitOverride().configureOutput({ outputError: (str, write) => write(str.replace(/^error: /, 'gateway: ')) });
    c.commands.forEach(configure);
  };
  configure(program);
  return program;
}

async function main(): Promise<void> {
  // `gateway … | head`: the reader went away; stop quietly, as other Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  const program = buildProgram();
  if (process.argv.length <= 2) {
    program.outputHelp();
    return;
  }
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? 0 : EXIT.usage;
      return;
    }
    throw err;
  }
}

main().catch((err: unknown) => {
  // Problems the user must fix carry an exit code and a one-line message; bugs, a stack.
  const exitCode = (err as { exitCode?: unknown } | null)?.exitCode;
  if (typeof exitCode === 'number') {
    process.stderr.write(`gateway: ${(err as Error).message}\n`);
    process.exit(exitCode);
  }
  process.stderr.write(`gateway: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
