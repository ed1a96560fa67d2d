import type { CreditLedger } from '../billing/credit-ledger.ts';
import type { KeyRateLimiter, RateLimitStore } from '../billing/rate-limits.ts';
import type { UsageHistory } from '../billing/usage-history.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { RuntimeCatalog } from '../catalog/runtime-catalog.ts';
import type { GatewayConfig } from '../config/load-config.ts';
import type { ConfigReloader } from '../config/config-reload.ts';
import type { Secret } from '../domain/secret.ts';
import type { AccountService } from '../identity/account-service.ts';
import type { ApiKeyService } from '../identity/api-key-service.ts';
import type { AuditTrail } from '../identity/audit-trail.ts';
import type { Authenticator } from '../identity/authenticator.ts';
import type { OperatorAccounts } from '../identity/operator-accounts.ts';
import type { UsageSearch } from '../billing/usage-search.ts';
import type { ProviderRowConsole } from './provider-row-console.ts';
import type { EmbeddingGeneration } from './embedding-generation.ts';
import type { ImageGeneration } from './image-generation.ts';
import type { SpeechGeneration } from './speech-generation.ts';
import type { VideoGeneration } from './video-generation.ts';
import type { VoiceCatalog } from '../catalog/voices.ts';
import type { ImageRequests } from './image-requests.ts';
import type { MediaDownloads } from './media-downloads.ts';
import type { MediaLibrary } from './media-library.ts';
import type { TextGeneration } from './text-generation.ts';
import type { WebhookService } from './webhook-endpoints.ts';
import type { ProviderKeyService } from './provider-key-service.ts';
import type { GatewayTelemetry } from '../telemetry/gateway-telemetry.ts';

/** Everything the HTTP surfaces may call; built once by the composition root. */
export interface GatewayServices {
  /** The running configuration: its reloadable parts are replaced by a reload, the rest are as at start. */
  config: GatewayConfig;
  /** Reloads gateway.yaml (SIGHUP, the admin API). */
  configReloader: ConfigReloader;
  catalog: Catalog;
  /** The catalog's runtime overrides (models, prices, switches) and price history: the admin API's and console's. */
  runtimeCatalog: RuntimeCatalog;
  authenticator: Authenticator;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  /** The audit log: who changed what, when and from where. */
  audit: AuditTrail;
  /** Providers' upstream keys added, reweighted and removed at runtime (admin API). */
  providerKeys: ProviderKeyService;
  ledger: CreditLedger;
  usage: UsageHistory;
  text: TextGeneration;
  embeddings: EmbeddingGeneration;
  images: ImageGeneration;
  speech: SpeechGeneration;
  video: VideoGeneration;
  voices: VoiceCatalog;
  /** Images answered while the client waits: relayed, streamed or made as a job, as the model's row serves them. */
  imageRequests: ImageRequests;
  /** Archived files by signed link (filesystem store). */
  mediaDownloads: MediaDownloads;
  /** The account's archived media outputs, for the dashboard. */
  mediaLibrary: MediaLibrary;
  /** Bearer token that opens the admin API; undefined keeps it closed (404). */
  adminToken: Secret | undefined;
  /** Per-key requests and tokens per minute and requests in flight, checked at admission. */
  rateLimits: KeyRateLimiter;
  /** The limiter library's counters (memory, or Redis with REDIS_URL), for other throttles (sign-in). */
  limiterStore: RateLimitStore;
  /** The operator console's accounts: search, view, credit with a reason, disable. */
  operatorAccounts: OperatorAccounts;
  /** Usage across accounts: filtered pages with totals, and the CSV export. */
  usageSearch: UsageSearch;
  /** The provider rows with their breakers and health in this process, and "test this row". */
  providerRows: ProviderRowConsole;
  /** Metrics and the operator's log lines. */
  telemetry: GatewayTelemetry;
  /** The account's webhook endpoints, their delivery logs and its low-balance threshold. */
  webhooks: WebhookService;
}
