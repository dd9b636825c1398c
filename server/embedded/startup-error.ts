// A start-up problem the operator must fix (not a bug): the command prints its one-line message
// and exits with EX_CONFIG (78), like a bad configuration value.
export class StartupError extends Error {
  readonly exitCode = 78;
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The one line for a port some other process holds, naming the variable that chooses it. */
export function portInUseError(variable: string, port: number): StartupError {
  return new StartupError(`${variable} ${port} is in use by another process: set ${variable} to a free port`);
}
