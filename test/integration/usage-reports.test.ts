/**
 * What an answer is charged when its upstream's usage report is missing a count, garbles one, or reports more
 * than any record holds. A count left out or below zero is no count: the gateway counts that part itself
 * (never a count of nothing, which would serve the output free). A report of 1e15 tokens is charged its hold and
 * recorded, the cost past the hold written as uncharged (the settlement statement once failed on it, leaving the
 * answer uncharged and unrecorded).
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { heldNanosOf, keyHeaders, usageRecords, type UsageRecordBody } from '../support/http-helpers.ts';

import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

type ChargedRecord = UsageRecordBody & { usage: { unchargedUsdCost?: number } };

const words = Array.from({ length: 400 }, (_, index) => ` word${index}`);

/** The usage each upstream model reports for the 400 words it answers. */
const reports: Readonly<Record<string, object>> = {
  'no-output-count': { prompt_tokens: 12 },
  'negative-output-count': { prompt_tokens: 12, completion_tokens: -1 },
  'negative-input-count': { prompt_tokens: -5, completion_tokens: 400 },
  absurd: { prompt_tokens: 1e15, completion_tokens: 1e15, total_tokens: 2e15 },
};

function answer(model: string, stream: boolean, response: ServerResponse): void {
  const usage = reports[model];
  const base = { id: 'chatcmpl-usage', created: 1_723_031_664, model };
  if (!stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    const message = { role: 'assistant', content: words.join(''), refusal: null };
    const choice = { index: 0, message, logprobs: null, finish_reason: 'stop' };
    response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [choice], usage }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (fields: object) =>
    response.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...fields })}\n\n`);
  for (const word of words) chunk({ choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  chunk({ choices: [], usage });
  response.end('data: [DONE]\n\n');
}

const messages = [{ role: 'user', content: 'count to four hundred' }];
const calls = (model: string): Array<[string, string, object]> => [
  ['alpha relayed, streamed', '/api/alpha/v1/chat/completions', { model, messages, stream: true }],
  ['alpha relayed, whole', '/api/alpha/v1/chat/completions', { model, messages }],
  ['native, translated', '/api/v1/text/completions', { model, messages }],
];

for (const leases of [true, false])
  describe(`usage reports an answer is charged by (credit leases ${leases ? 'on' : 'off'})`, () => {
    let fake: FakeServer;
    let gateway: TestGateway;

    beforeAll(async () => {
      fake = await startFakeServer((request, response) => {
        const body = request.body as { model: string; stream?: boolean };
        answer(body.model, body.stream === true, response);
      });
      gateway = await startTestGateway({
        upstreams: [fake],
        configText: [
          'providers:',
          fakeProviderYaml('reporting', 'openai', fake),
          'models:',
          ...Object.keys(reports).map(
            (id) =>
              `  - { id: ${id}, limits: { maxOutputTokens: 1000 }, pricing: { inputPerMTok: 1000, outputPerMTok: 1000 }, providers: [{ provider: reporting, model: ${id} }] }`,
          ),
          ...(leases ? [] : ['ledger: { leaseMaxUsd: 0 }']),
        ].join('\n'),
      });
    });
    afterAll(async () => {
      await gateway?.close();
    });

    const served = async (model: string): Promise<Array<[string, UsageRecordBody]>> => {
      const records: Array<[string, UsageRecordBody]> = [];
      for (const [name, url, payload] of calls(model)) {
        const { key } = await gateway.createFundedKey({ credits: 100 });
        const response = await gateway.request({ method: 'POST', url, headers: keyHeaders(key), payload });
        expect(response.statusCode, name).toBe(200);
        expect(response.body, name).toContain('word399');
        const [record, ...more] = await usageRecords(gateway, key);
        expect(more, name).toEqual([]);
        records.push([name, record!]);
      }
      return records;
    };

    for (const model of ['no-output-count', 'negative-output-count'])
      it(`counts the output itself when the report's is ${model.replace('-output-count', '')}`, async () => {
        for (const [name, record] of await served(model)) {
          // 400 words delivered, at 1,000 USD per million tokens: at least 0.4 USD of output.
          expect(record.usage?.completionTokens, name).toBeGreaterThanOrEqual(400);
          expect(record.usage?.promptTokens, name).toBe(12);
          expect(record.usdCost, name).toBeGreaterThan(0.4);
          expect(record.usage?.countedByGateway, name).toBe(true);
        }
      });

    it('counts the prompt itself when the report says it had fewer than none', async () => {
      for (const [name, record] of await served('negative-input-count')) {
        expect(record.usage?.promptTokens, name).toBeGreaterThan(0);
        expect(record.usage?.completionTokens, name).toBe(400);
        expect(record.usage?.countedByGateway, name).toBe(true);
      }
    });

    it('charges an absurd report its hold and records it, the rest written as uncharged', async () => {
      const { key, accountId } = await gateway.createFundedKey({ credits: 100 });
      const response = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: keyHeaders(key),
        payload: { model: 'absurd', messages, max_tokens: 100 },
      });
      expect(response.statusCode).toBe(200);
      const [record, ...more] = (await usageRecords(gateway, key)) as ChargedRecord[];
      expect(more).toEqual([]);
      // The hold: the prompt's bound and 100 output tokens, at 1,000 USD per million: about 0.1 USD.
      expect(record!.usdCost).toBeGreaterThan(0.1);
      expect(record!.usdCost).toBeLessThan(0.2);
      expect(record!.usage.unchargedUsdCost).toBeGreaterThan(9e9);
      const balance = await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(key) });
      expect(balance.json<{ creditBalance: number }>().creditBalance).toBeCloseTo(100 - record!.usdCost, 9);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    });
  });
