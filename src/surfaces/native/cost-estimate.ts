import type { Static } from '@fastify/type-provider-typebox';
import { nanosToUsd } from '../../domain/money.ts';
import type { CostEstimateSchema } from './answer-schemas.ts';

/** The spec's cost-estimate envelope, shared by the four estimate routes. */
export function costEstimate(nanos: bigint): Static<typeof CostEstimateSchema> {
  return { data: { estimatedUserCost: nanosToUsd(nanos), currency: 'USD' }, success: true, status: 200 };
}
