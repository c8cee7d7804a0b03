/**
 * The scripted model of `bench tick --dialogue`, as its own process (the benchmark's own
 * process blocks while wrk runs, so it cannot serve the model itself):
 *   node dist/bench/tick/fake-model.js <latencyMs>
 * Prints {"baseUrl"} once listening; on SIGTERM prints {"chats": N} and exits.
 */
import { startFakeOpenAI } from '../fake-openai.js';

const fake = await startFakeOpenAI({ latencyMs: Number(process.argv[2] ?? 2000) });
fake.reply = () => 'Keep your voice down, friend. Zombies about.';
process.stdout.write(`${JSON.stringify({ baseUrl: fake.baseUrl })}\n`);
process.once('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ chats: fake.hits('chat') })}\n`);
  void fake.close().then(() => process.exit(0));
});
