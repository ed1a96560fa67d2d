import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { GatewayTelemetry } from '../../src/telemetry/gateway-telemetry.ts';

describe('the metrics of a scrape', () => {
  it('reads the holds of the database once per scrape for both hold gauges', async () => {
    const telemetry = new GatewayTelemetry(pino({ level: 'silent' }));
    let holdQueries = 0;
    let jobQueries = 0;
    telemetry.observe({
      ledger: () => ({ reservations: 2, leases: 1, leasedNanos: 1_500_000_000n }),
      holds: async () => {
        holdQueries += 1;
        return [{ kind: 'lease', count: 3, nanos: 2_000_000_000n }];
      },
      jobs: async () => {
        jobQueries += 1;
        return { queued: 4 };
      },
      breakers: () => [],
    });
    for (let scrape = 1; scrape <= 3; scrape += 1) {
      const text = await telemetry.metricsText();
      expect(holdQueries).toBe(scrape);
      expect(jobQueries).toBe(scrape);
      expect(text).toMatch(/^gateway_holds\{kind="lease"\} 3$/m);
      expect(text).toMatch(/^gateway_holds_usd\{kind="lease"\} 2$/m);
      expect(text).toMatch(/^gateway_credit_leased_usd 1\.5$/m);
      expect(text).toMatch(/^gateway_media_jobs\{state="queued"\} 4$/m);
    }
  });

  it('gives every kind of hold a series, 0 when the database has none, and none when it could not be read', async () => {
    const telemetry = new GatewayTelemetry(pino({ level: 'silent' }));
    let holds: Array<{ kind: string; count: number; nanos: bigint }> | undefined = [];
    telemetry.observe({
      ledger: () => ({ reservations: 0, leases: 0, leasedNanos: 0n }),
      holds: async () => {
        if (!holds) throw new Error('the database is away');
        return holds;
      },
      jobs: async () => ({ queued: 0, processing: 0 }),
      breakers: () => [],
    });
    const empty = await telemetry.metricsText();
    for (const kind of ['request', 'lease', 'media-job']) {
      expect(empty).toMatch(new RegExp(`^gateway_holds\\{kind="${kind}"\\} 0$`, 'm'));
      expect(empty).toMatch(new RegExp(`^gateway_holds_usd\\{kind="${kind}"\\} 0$`, 'm'));
    }
    holds = [{ kind: 'media-job', count: 2, nanos: 500_000_000n }];
    const some = await telemetry.metricsText();
    expect(some).toMatch(/^gateway_holds\{kind="media-job"\} 2$/m);
    expect(some).toMatch(/^gateway_holds_usd\{kind="media-job"\} 0\.5$/m);
    expect(some).toMatch(/^gateway_holds\{kind="request"\} 0$/m);
    expect(some).toMatch(/^gateway_holds_usd\{kind="lease"\} 0$/m);
    expect(some.match(/^gateway_holds\{/gm)).toHaveLength(3);
    holds = undefined;
    const unread = await telemetry.metricsText();
    expect(unread).toMatch(/^gateway_database_figures_read 0$/m);
    expect(unread).not.toMatch(/^gateway_holds(_usd)?\{/m);
  });

  it('counts answers by route template, method and status, with one latency series per route and method', async () => {
    const telemetry = new GatewayTelemetry(pino({ level: 'silent' }));
    for (const status of [200, 200, 404]) telemetry.meterOf('/api/v1/ai/models').answered('GET', status, 0.002);
    telemetry.meterOf('unmatched').answered('GET', 404, 0.001);
    telemetry.meterOf('/api/v1/media/files/*').answered('GET', 200, 0.001);
    telemetry.meterOf('/api/v1/media').answered('GET', 200, 0.001);
    const text = await telemetry.metricsText();
    expect(text).toMatch(
      /^gateway_http_requests_total\{surface="native",route="\/api\/v1\/ai\/models",method="GET",status="200"\} 2$/m,
    );
    expect(text).toMatch(
      /^gateway_http_requests_total\{surface="native",route="\/api\/v1\/ai\/models",method="GET",status="404"\} 1$/m,
    );
    expect(text).toMatch(
      /^gateway_http_request_duration_seconds_count\{surface="native",route="\/api\/v1\/ai\/models",method="GET"\} 3$/m,
    );
    expect(text).toMatch(
      /^gateway_http_requests_total\{surface="other",route="unmatched",method="GET",status="404"\} 1$/m,
    );
    expect(text).toMatch(
      /^gateway_http_requests_total\{surface="native",route="\/api\/v1\/media\/files\/\*",method="GET",status="200"\} 1$/m,
    );
    expect(text).toMatch(
      /^gateway_http_requests_total\{surface="account",route="\/api\/v1\/media",method="GET",status="200"\} 1$/m,
    );
  });

  it('stays a valid exposition when an upstream reports token counts past what a number holds', async () => {
    const telemetry = new GatewayTelemetry(pino({ level: 'silent' }));
    const generation = {
      accountId: 'acct',
      apiKeyId: 'key',
      model: 'm',
      modality: 'text' as const,
      status: 'succeeded',
      chargedNanos: 1n,
      durationMs: 5,
      request: null,
    };
    // Whole-token counts the upstream claimed; each is finite, their sum is not.
    telemetry.generationRecorded({
      ...generation,
      generationId: 'gen_1',
      usage: { promptTokens: 1e308, completionTokens: 1 },
    });
    telemetry.generationRecorded({
      ...generation,
      generationId: 'gen_2',
      usage: { promptTokens: 1e308, completionTokens: Number.NaN },
    });
    const text = await telemetry.metricsText();
    expect(text).toMatch(/^gateway_generation_tokens_total\{model="m",direction="input"\} \+Inf$/m);
    expect(text).toMatch(/^gateway_generation_tokens_total\{model="m",direction="output"\} 1$/m);
    // Every sample line is name, optional labels, and a number as Prometheus reads one (Go's ParseFloat: `Infinity` is not one).
    const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    for (const line of samples)
      expect(line).toMatch(/^[a-z_:][a-z0-9_:]*(\{.*\})? ([+-]?inf|nan|-?\d+(\.\d+)?(e[+-]?\d+)?)$/i);
  });

  it("puts a record on the line of the request it served, or on a line of its own (a media job's)", () => {
    const lines: Array<Record<string, unknown>> = [];
    const telemetry = new GatewayTelemetry(
      pino({ level: 'info' }, { write: (text: string) => lines.push(JSON.parse(text) as Record<string, unknown>) }),
    );
    const generation = {
      accountId: 'acct',
      apiKeyId: 'key',
      model: 'm',
      modality: 'image' as const,
      status: 'succeeded',
      chargedNanos: 1_500_000n,
      durationMs: 5,
      request: null,
      usage: {},
    };
    telemetry.generationRecorded({
      ...generation,
      generationId: 'gen_job',
      route: { providerId: 'p', upstreamModel: 'u', fallbacks: [] },
    });
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'generation recorded',
        event: 'generation',
        generation: {
          generationId: 'gen_job',
          accountId: 'acct',
          apiKeyId: 'key',
          model: 'm',
          modality: 'image',
          status: 'succeeded',
          usdCost: 0.0015,
          durationMs: 5,
          providerId: 'p',
          upstreamModel: 'u',
          fallbacks: [],
        },
      }),
    ]);
    // A request's record is counted when announced; its fields go on the request's own line, not on one here.
    telemetry.generationCounted({ ...generation, generationId: 'gen_sync' });
    expect(lines).toHaveLength(1);
  });
});
