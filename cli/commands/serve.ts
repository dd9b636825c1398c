import { parseArgs } from 'node:util';
import { createLogger } from '../../server/logger.ts';
import { chooseLogFormat } from '../../server/log-format.ts';
import { startGateway, type Role, type StartOptions } from '../../server/serve.ts';
import { MissingSearchAttributesError, WrongSearchAttributeTypeError } from '../../server/temporal/search-attributes.ts';
import { configOrExit } from '../shared.ts';

const ROLES: Role[] = ['api', 'worker', 'all'];

/** `workerInterceptors`: for a harness that starts the gateway with faults of its own (test/support/serve-with-faults.ts). */
export async function serveCommand(args: string[], opts: Pick<StartOptions, 'workerInterceptors'> = {}): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string', default: 'all' } }, strict: true });
  const role = values.role as Role;
  if (!ROLES.includes(role)) {
    process.stderr.write(`gateway serve: --role must be one of ${ROLES.join(', ')} (got "${values.role}")\n`);
    return 2;
  }
  const config = configOrExit();
  const logger = createLogger(config.logLevel, undefined, chooseLogFormat(process.stdout.isTTY === true, config.logFormat));
  let gateway;
  try {
    gateway = await startGateway({ config, role, logger, ...opts });
  } catch (err) {
    // Operator-fixable setup problems get one line, not a stack trace.
    if (err instanceof MissingSearchAttributesError || err instanceof WrongSearchAttributeTypeError) {
      process.stderr.write(`gateway: ${err.message}\n`);
      return 78; // EX_CONFIG
    }
    throw err;
  }
  if (gateway.temporalUiUrl) logger.info(`Temporal UI: ${gateway.temporalUiUrl}`);

  return new Promise<number>((resolve) => {
    let stoppingSince = 0;
    const shutdown = (signal: string, code: number) => {
      if (stoppingSince) {
        // One Ctrl-C often arrives twice (terminal process group + npm forwarding it): only a
        // signal well after the first forces the exit. The exit hook still signals children.
        if (Date.now() - stoppingSince < 3_000) return;
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stoppingSince = Date.now();
      logger.info({ signal }, 'shutting down');
      const done = (exitCode: number) => {
        resolve(exitCode);
        // Everything is stopped; the process ends as soon as nothing holds it. A worker whose
        // shutdown had to be forced can leave a native thread behind that would hold it for good.
        setTimeout(() => process.exit(exitCode), 2_000).unref();
      };
      gateway.stop().then(
        () => {
          logger.info('stopped');
          done(code);
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          done(1);
        },
      );
    };
    process.on('SIGTERM', () => shutdown('SIGTERM', 0));
    process.on('SIGINT', () => shutdown('SIGINT', 0));
    gateway.workerDone.then(
      () => !stoppingSince && shutdown('worker stopped', 1),
      (err: unknown) => {
        // While stopping, this is the worker giving up on tasks that would not finish in time
        // (shutdownForceTime): they run again elsewhere, so it is worth a warning, not more.
        if (stoppingSince) {
          logger.warn({ err }, 'the Temporal worker was stopped before its tasks finished');
        } else {
          logger.fatal({ err }, 'the Temporal worker failed');
          shutdown('worker failed', 1);
        }
      },
    );
  });
}
