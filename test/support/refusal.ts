import { GatewayError } from '../../src/domain/errors.ts';

/** The gateway's refusal `run` throws; anything else it throws is rethrown, and running through is a failure. */
export function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}
