// `gateway serve` with a fault the crash tests inject from the harness, through the worker's
// activity interceptors — the product reads no fault switch of its own.
//   node test/support/serve-with-faults.ts hold-after-answer <ms>
// holds the covered call's check-and-send activity <ms> after it returned (its answer has already
// reached the API waiting in this process), so a kill lands between the answer and the completion
// of the workflow's first task.
import type { Context } from '@temporalio/activity';
import type { WorkerInterceptors } from '@temporalio/worker';
import { serveCommand } from '../../cli/commands/serve.ts';

const [fault, value] = process.argv.slice(2);
if (fault !== 'hold-after-answer' || !Number.isFinite(Number(value))) {
  process.stderr.write('usage: serve-with-faults.ts hold-after-answer <ms>\n');
  process.exit(2);
}
const holdMs = Number(value);

const interceptors: WorkerInterceptors = {
  activity: [
    (ctx: Context) => ({
      inbound: {
        async execute(input, next) {
          const result = await next(input);
          if (ctx.info.activityType === 'checkThenExecute') {
            // Said on stderr, so the test can tell the fault was in place when it killed.
            process.stderr.write(`fault: holding ${ctx.info.activityType} ${holdMs} ms after its answer\n`);
            await new Promise((r) => setTimeout(r, holdMs));
          }
          return result;
        },
      },
    }),
  ],
};

process.exitCode = await serveCommand(['--role', 'all'], { workerInterceptors: interceptors });
