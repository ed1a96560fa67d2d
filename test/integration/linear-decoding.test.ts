import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { longestEventLoopBlockMs } from '../support/event-loop.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * A conversation of tens of thousands of messages crosses the wire, is decoded, translated and answered
 * without blocking the event loop for long. The bound is generous, not a timing: it tells linear from
 * quadratic. Each decoder's and encoder's own bound is claimed in test/unit/linear-decoding.test.ts.
 */
const items = 40_000;

describe('decoding and translating long conversations', () => {
  const setup = useFamilyGateway();

  async function withinLoopDelay(send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
    const { result, blockedMs } = await longestEventLoopBlockMs(send);
    expect(blockedMs).toBeLessThan(1_000);
    return result;
  }

  it('as many user messages in a row, merged into one Anthropic turn', async () => {
    const { key } = await setup.gateway.createFundedKey({ credits: 100 });
    const messages = Array.from({ length: items }, () => ({ role: 'user', content: 'x' }));
    const response = await withinLoopDelay(() =>
      setup.gateway.request({
        method: 'POST',
        url: '/api/v1/text/completions',
        headers: keyHeaders(key),
        payload: { model: 'via-anthropic', messages },
      }),
    );
    expect(response.statusCode).toBe(200);
  });
});
