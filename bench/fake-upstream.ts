// The benchmark's upstream: the same fake OpenAI server the tests use, in a process of its own.
import { startOpenAiFake } from '../test/fakes/openai-fake.ts';

const fake = await startOpenAiFake();
process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
