import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigReloader } from '../../src/config/config-reload.ts';
import { parseConfig, type GatewayConfig } from '../../src/config/load-config.ts';

/** A gateway.yaml of the sandbox echo model at `input` USD per million input tokens. */
const configAt = (input: number): GatewayConfig =>
  parseConfig(
    [
      'providers:',
      '  sandbox: { protocol: sandbox }',
      'models:',
      `  - { id: echo, pricing: { inputPerMTok: ${input} }, providers: [{ provider: sandbox, model: echo }] }`,
    ].join('\n'),
    'gateway.yaml',
    {},
  );

const priceOf = (config: GatewayConfig) => config.models[0]?.pricing?.inputPerMTok;

describe('a reload of gateway.yaml', () => {
  it('readies the reloaded file before it serves, one reload after another', async () => {
    const files = [configAt(2), configAt(3)];
    const steps: string[] = [];
    const reloader = new ConfigReloader({
      running: configAt(1),
      read: () => files.shift()!,
      prepare: async (config) => {
        steps.push(`prepare ${priceOf(config)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
      apply: (config) => steps.push(`apply ${priceOf(config)}`),
      logger: pino({ level: 'silent' }),
    });
    const outcomes = await Promise.all([reloader.reload('admin'), reloader.reload('SIGHUP')]);
    expect(outcomes.map((outcome) => outcome.applied)).toEqual([true, true]);
    expect(steps).toEqual(['prepare 2', 'apply 2', 'prepare 3', 'apply 3']);
  });

  it('serves the file without what it could not ready: a preparation that fails, or does not answer in time', async () => {
    const applied: Array<number | undefined> = [];
    const logged: string[] = [];
    const logger = pino(
      { level: 'error' },
      {
        write: (line: string) => {
          const entry: unknown = JSON.parse(line);
          if (typeof entry === 'object' && entry !== null && 'msg' in entry) logged.push(String(entry.msg));
        },
      },
    );
    const reloaderWith = (prepare: () => Promise<void>) =>
      new ConfigReloader({
        running: configAt(1),
        read: () => configAt(5),
        prepare,
        prepareWaitMs: 50,
        apply: (config) => applied.push(priceOf(config)),
        logger,
      });
    expect((await reloaderWith(() => Promise.reject(new Error('storage down'))).reload('admin')).applied).toBe(true);
    const startedAt = Date.now();
    expect((await reloaderWith(() => new Promise(() => undefined)).reload('admin')).applied).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(applied).toEqual([5, 5]);
    expect(logged).toEqual([
      'could not ready the reloaded configuration; it serves without it',
      'the reloaded configuration was not ready in time; it serves without it',
    ]);
  });
});
