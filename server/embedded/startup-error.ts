// A start-up problem the operator must fix (not a bug): the command prints its one-line message
// and exits with EX_CONFIG (78), like a bad configuration value.
export class StartupError extends Error {
  readonly exitCode = 78;
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
