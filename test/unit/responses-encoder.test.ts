import { describe, expect, it } from 'vitest';
import { ResponseEncoder } from '../../src/surfaces/alpha/responses-codec.ts';

describe('the Responses stream encoder', () => {
  it('numbers the error event of a failed stream after the events before it, as clients check', () => {
    const encoder = new ResponseEncoder('m', { model: 'm', input: 'Half' });
    const numbers = encoder
      .events({ type: 'text-delta', text: 'Half' })
      .map(([, payload]) => ('sequence_number' in payload ? payload.sequence_number : undefined));
    expect(encoder.failure('upstream_error', 'failed')).toEqual({
      type: 'error',
      code: 'upstream_error',
      message: 'failed',
      param: null,
      sequence_number: numbers.length,
    });
    expect(numbers).toEqual([...numbers.keys()]);
  });
});
