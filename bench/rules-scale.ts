// `npm run bench:rules [-- --json] [--small 10] [--large 10000] [--calls 300]`: the covered call
// with 10,000 rules on its chain against one with 10, in one embedded gateway in one run
// (bench/support/scale-rules.ts). Loopback only.
import { parseArgs } from 'node:util';
import { rulesScaleOn, withBenchAgent } from './support/bench-agent.ts';
import { describeRulesScale } from './support/scale-rules.ts';

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, small: { type: 'string', default: '10' }, large: { type: 'string', default: '10000' }, calls: { type: 'string', default: '300' } },
});

async function main() {
  const result = await withBenchAgent((target, agent) => rulesScaleOn(target, agent, { small: Number(args.small), large: Number(args.large), calls: Number(args.calls) }));
  console.log(args.json ? JSON.stringify({ rules: result }, null, 2) : describeRulesScale(result));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
