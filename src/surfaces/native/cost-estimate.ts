import { nanosToUsd } from '../../domain/money.ts';

/** The spec's cost-estimate envelope, shared by the four estimate routes. */
export function costEstimate(nanos: bigint): { data: { estimatedUserCost: number; currency: 'USD' }; success: true; status: 200 } {
  return { data: { estimatedUserCost: nanosToUsd(nanos), currency: 'USD' }, success: true, status: 200 };
}
