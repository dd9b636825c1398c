// Exit codes of the `gateway` command (documented in `gateway --help` and README.md), and the one
// error type commands throw: gateway.ts prints `gateway: <message>` and exits with its code.

export const EXIT = {
  /** Done; for `call`, the action was called. */
  ok: 0,
  /** The call was denied, its approval expired, or it failed upstream. */
  failed: 1,
  /** Bad usage, not signed in, or an error answer from the gateway. */
  usage: 2,
  /** The call waits for a person (without `--wait`, or `--wait` gave up). */
  pending: 3,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage) {
    super(message);
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);

export const EXIT_CODES_HELP = `Exit codes:
  0    done (for call: the action was called)
  1    the call was denied, its approval expired, or it failed upstream (an upstream error status included)
  2    usage error, not signed in, or an error answer from the gateway
  3    the call is pending approval (without --wait, or --wait timed out)
  78   invalid configuration (serve, migrate, vault, mcp)
  130  interrupted`;
