/**
 * The account API's answers as the dashboard reads them: the very schemas the gateway serializes by
 * (src/surfaces/account/account-schemas.ts), so a change on one side fails the other's type check.
 * Type-only imports: nothing of the server ends up in the bundle.
 */
import type { Capabilities, ParamConstraints } from '../../src/domain/capabilities.ts';
import type { PricingEntry } from '../../src/domain/model-pricing.ts';
import type {
  AuditEntryView,
  GenerationRecordView,
  ListedKey,
  MediaItemView,
  PricedModelView,
} from '../../src/surfaces/account/account-schemas.ts';

export { mediaKinds, usageModalities, type MediaKind } from '../../src/domain/usage-modalities.ts';
export type {
  Account,
  CreatedKey,
  DailySpendView as DailySpend,
  RateLimitsView as RateLimits,
} from '../../src/surfaces/account/account-schemas.ts';

export const capNames = ['daily', 'weekly', 'monthly', 'total'] as const;
export type CapName = (typeof capNames)[number];

export const rateLimitNames = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests'] as const;
export type RateLimitName = (typeof rateLimitNames)[number];

export type ApiKey = ListedKey;
export type GenerationRecord = GenerationRecordView;
export type MediaItem = MediaItemView;
export type PricedModel = Omit<PricedModelView, 'capabilities' | 'speechParameters'> & {
  capabilities?: Capabilities;
  speechParameters?: ParamConstraints;
};
export type Prices = PricingEntry;
export type AuditEntry = AuditEntryView;
export type AuditAction = AuditEntry['action'];

/** A page of an offset/limit listing. */
export interface Page<T> {
  results: T[];
  total: number;
  offset: number;
  limit: number;
}

export type {
  OperatorAccountDetailView as OperatorAccountDetail,
  OperatorAccountView as OperatorAccount,
  OperatorKeyView as OperatorKey,
  ProviderRowView as ProviderRow,
  RowTestResultView as RowTestResult,
  UsageSearchPageView as UsageSearchPage,
} from '../../src/surfaces/operator/operator-schemas.ts';
