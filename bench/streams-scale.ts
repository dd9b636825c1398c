// `npm run bench:streams [-- --json] [--streams 500] [--rounds 3]`: 500 open people's event streams
// (GET /v1/events) of one org, and an approval raised: how long until it arrives in each
// (bench/support/scale-streams.ts). One embedded gateway; loopback only.
import { parseArgs } from 'node:util';
import { streamsScaleOn, withBenchAgent } from './support/bench-agent.ts';
import { describeStreams } from './support/scale-streams.ts';

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, streams: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' } },
});

async function main() {
  const result = await withBenchAgent((target, agent) => streamsScaleOn(target, agent, { streams: Number(args.streams), rounds: Number(args.rounds) }), '{"ok":true}');
  console.log(args.json ? JSON.stringify({ streams: result }, null, 2) : describeStreams(result));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
