// A CPU profile of the bench process while it delivers one scenario (from the dispatcher's start, the outbox already filled):
//   node dist/bench/webhooks/profile.js '10 endpoints' 20000 /tmp/hooks.cpuprofile
// Open the file in Chrome DevTools, or summarise it by self time with `--top`.
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { deliver, startReceiver } from './run.js';
import { SCENARIOS } from './scenarios.js';

const [name = '10 endpoints', count = '20000', out = 'hooks.cpuprofile'] = process.argv.slice(2);
const scenario = SCENARIOS.find((s) => s.name === name);
if (!scenario) throw new Error(`no scenario named ${name}`);
const rx = await startReceiver();
try {
  await deliver(rx, scenario, 2000);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  // Filling the outbox is left out: the profile starts when the dispatcher does.
  const r = await deliver(rx, scenario, Number(count), () => session.post('Profiler.start'));
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(out, JSON.stringify(profile));
  process.stdout.write(`${JSON.stringify(r)}\n`);
} finally {
  rx.child.kill();
}
