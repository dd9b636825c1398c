// Preloaded into a CLI process (NODE_OPTIONS=--expose-gc --import …): collects garbage every
// 200 ms, as a long wait eventually does, and counts the collections in GATEWAY_TEST_GC_FILE so a
// test knows they happened. Objects the CLI dropped but still relied on are gone at once.
import { appendFileSync } from 'node:fs';

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('collect-garbage-often needs --expose-gc');
const file = process.env.GATEWAY_TEST_GC_FILE;
setInterval(() => {
  collect();
  if (file) appendFileSync(file, '.');
}, 200).unref();
