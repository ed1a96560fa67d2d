import type { CreditLedger, GenerationStatus, Modality, Reservation, Settlement } from '../billing/credit-ledger.ts';
import type { Catalog, CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import { isGatewayError } from '../domain/errors.ts';
import type { GenerationAttempt, GenerationRoute } from '../domain/generation-route.ts';
import type { MediaJobInput } from '../domain/media-job.ts';
import type { Caller, RequestContext } from '../domain/request-context.ts';
import type { MediaJobRow } from '../storage/media-jobs-repository.ts';
import { worthFallingBack } from './fallback.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import { withKey, type RowSources } from './serving-rows.ts';
import type { ReferenceUrls, UrlCheck } from './image-request-check.ts';
import type { JobSubmission } from './job-submission.ts';
import type { UpstreamKey } from './upstream-keys.ts';
import { dispatchWithFallback, type Resilience } from './upstream-dispatch.ts';
import type { WorkTracker } from './work-tracker.ts';

export interface PipelineDependencies extends RowSources {
  work: WorkTracker;
  catalog: Catalog;
  ledger: CreditLedger;
  /** Breakers of the provider rows, the fallback and retry events, and the retry-after budget of a request. */
  resilience: Resilience;
  /** Media jobs' holds and rows, queued in one transaction. */
  submission: JobSubmission;
  /** The address rules of a job's reference URLs, checked once the job is admitted. */
  checkReferenceUrl: UrlCheck;
}

/** What a recipe makes of a request before anything is held. */
export interface Plan<R extends RowRef> {
  /** The rows that may serve the request, best first. */
  rows: readonly R[];
  holdNanos: bigint;
  /** What the usage record keeps of the request. */
  recordedRequest: Record<string, unknown>;
  /** When the hold does not fit: what the free credits cover, in the request's own terms (said after how much is free). */
  whatFits?: (freeNanos: bigint) => string | undefined;
}

/** What a request that failed after reaching an upstream is charged and recorded with. */
export interface FailureCharge {
  costNanos: bigint;
  usage?: Record<string, unknown>;
}

/**
 * What a modality brings to the pipeline: the capability gate with the rows that can serve a request and what
 * to hold for it, one attempt on one row, and what its reading costs (the recipe settles `Charge` with it).
 */
export interface Recipe<Input extends { modelId: string }, R extends RowRef, P extends Plan<R>, Run, Answer = Run> {
  readonly modality: Modality;
  /** Checks the request against the model and its rows (refusals are 4xx, nothing held); the rows and the hold. */
  plan(model: CatalogModel, input: Input, context: RequestContext): P | Promise<P>;
  /** Work the hold pays for before any dispatch (media downloads); may narrow `plan.rows`. A failure releases the hold. */
  prepare?(plan: P): Promise<void>;
  /**
   * One attempt on one row (a serving row's `target` holds the upstream key chosen for the attempt): a run
   * whose meter settles `charge` when it ends, or a failure before anything reached the client that settled
   * nothing (then another row may serve the request).
   */
  dispatch(row: R, plan: P, charge: Charge): Promise<Run>;
  /**
   * What the caller gets of the run that served: a metered run as it is, or, for a run served whole (nothing
   * streamed), the answer, once `charge` is settled with its reading.
   */
  served(run: Run, plan: P, charge: Charge): Answer;
  /**
   * What a request that failed in the end with `error` is charged and recorded with (absent or undefined: nothing
   * charged, and a refusal of the gateway's own, a `GatewayError`, not recorded).
   */
  failure?(plan: P, error: unknown): FailureCharge | undefined;
}

/** What a media job's recipe makes of a request before anything is held: the job as it is queued. */
export interface JobPlan extends Omit<Plan<RowRef & { row: ProviderRow }>, 'recordedRequest'> {
  /**
   * What the job stores, in its kind's types: the request as its worker sends it, what the usage record keeps
   * of it, and the prices at submission, which the job is settled at.
   */
  job: MediaJobInput;
  /** Fields the model does not take, dropped rather than refused (compatibility surfaces). */
  dropped: string[];
  /** The reference URLs the request names, checked once it is admitted. */
  referenceUrls?: ReferenceUrls;
}

/**
 * What a media job kind brings to the pipeline: the model a request names, and the capability gate with the
 * rows that can serve it and what to hold. Its dispatch is the queueing of the job (hold and row in one
 * transaction); its worker sends it over the model's rows from that one (`dispatchWithFallback`, the same
 * breakers), meters it, settles it and records its route.
 */
export interface JobRecipe<Input> {
  modelId(input: Input): string;
  /** Checks the request (refusals are 4xx, nothing held): the job's rows, its hold and what it stores. */
  plan(model: CatalogModel, input: Input, caller: Caller): JobPlan | Promise<JobPlan>;
}

/**
 * The settlement of one request's hold, with what the pipeline knows of it: the modality, what the record
 * keeps of the request, and the route (read when the settlement is made, by then filled in by the dispatch).
 */
export class Charge {
  constructor(
    private readonly reservation: Reservation,
    private readonly terms: {
      modality: Modality;
      request: Record<string, unknown>;
      route: GenerationRoute;
      priceVersion: string | undefined;
    },
  ) {}

  /** The hold is settled or released: nothing is left to end. */
  get ended(): boolean {
    return this.reservation.isEnded;
  }

  /** Settles without waiting: the answer goes on while the hold still covers the cost. */
  settle(status: GenerationStatus, costNanos: bigint, usage: unknown): void {
    this.settleWith({ status, costNanos, usage });
  }

  /**
   * As `settle`, for a call whose upstream read input the gateway was not sent: its cost is claimed past the hold,
   * within what the account and the key have free at settlement (billing/settlement.ts).
   */
  settleUnseenInput(status: GenerationStatus, costNanos: bigint, usage: unknown): void {
    this.settleWith({ status, costNanos, usage, unseenInput: true });
  }

  private settleWith(settlement: Pick<Settlement, 'status' | 'costNanos' | 'usage' | 'unseenInput'>): void {
    const { modality, request, route, priceVersion } = this.terms;
    this.reservation.settleInBackground({ ...settlement, modality, request, route, priceVersion });
  }
}

/**
 * The one road every generation request walks: resolve the model -> capability gate (the recipe's plan) ->
 * admission (the hold) -> dispatch over the provider rows with breakers, retries and fallback -> meter ->
 * settle -> record (the usage record, with the route the request took). A recipe supplies the
 * modality's part of each step; the road itself is only here.
 */
export class GenerationPipeline {
  constructor(private readonly dependencies: PipelineDependencies) {}

  /** The rows' adapters and their providers' settings, for recipes picking rows. */
  get rowSources(): RowSources {
    return this.dependencies;
  }

  get catalog(): Catalog {
    return this.dependencies.catalog;
  }

  /** Admission of work that holds nothing (a prompt's tokens counted): `CreditLedger.admitsWork`. */
  admitWork(caller: Caller): Promise<void> {
    return this.dependencies.ledger.admitsWork(caller);
  }

  async run<Input extends { modelId: string }, R extends RowRef, P extends Plan<R>, Run, Answer>(
    context: RequestContext,
    recipe: Recipe<Input, R, P, Run, Answer>,
    input: Input,
  ): Promise<Answer> {
    const startedAt = Date.now();
    const { catalog, ledger } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    // A plan made at once (text's) is not awaited: a request's path takes no tick it does not need.
    const planned = recipe.plan(model, input, context);
    const plan = planned instanceof Promise ? await planned : planned;
    const reservation = await ledger.reserve({
      accountId: context.accountId,
      apiKeyId: context.apiKeyId,
      amountNanos: plan.holdNanos,
      modelId: model.modelId,
      whatFits: plan.whatFits,
    });
    // The request's line waits for the hold to end, and carries the usage record it was settled with.
    context.log?.awaits(reservation);
    reservation.whenEnded(this.dependencies.work.begin());
    if (context.slot) reservation.whenEnded(context.slot.hold());
    if (recipe.prepare) {
      try {
        await recipe.prepare(plan);
      } catch (error) {
        // The client is told of its request, not of storage failing to give the hold back (that is reported, and
        // the release sent again until written: the answer does not wait for it).
        void reservation.release().catch(() => undefined);
        throw error;
      }
    }
    const first = plan.rows[0]!;
    const route: GenerationRoute = {
      providerId: first.providerId,
      upstreamModel: first.upstreamModel,
      fallbacks: [],
      ...(context.requestId ? { requestId: context.requestId } : {}),
      ...(model.routingNamed ? { strategy: model.routing } : {}),
    };
    const charge = new Charge(reservation, {
      modality: recipe.modality,
      request: plan.recordedRequest,
      route,
      // The prices of the model as resolved: the plan held at them and the recipe charges at them.
      priceVersion: model.priceVersion,
    });
    const attempts: GenerationAttempt[] = [];
    let served: { value: Run; row: R; key: UpstreamKey | undefined };
    try {
      served = await dispatchWithFallback<R, Run>({
        modelId: model.modelId,
        accountId: context.accountId,
        rows: plan.rows,
        resilience: this.dependencies.resilience,
        // A run that failed after its meter settled it has nothing left to end, and no other row may serve it;
        // otherwise nothing has reached the client yet, and another row may serve it under the same hold.
        mayContinue: (error) => !reservation.isEnded && worthFallingBack(error),
        attempt: (row, key) => recipe.dispatch(withKey(row, key), plan, charge),
        attempts,
      });
    } catch (error) {
      const last = attempts.at(-1);
      if (last) {
        route.providerId = last.providerId;
        route.upstreamModel = last.upstreamModel;
        route.fallbacks = attempts.slice(0, -1);
      }
      if (reservation.isEnded) throw error;
      const failure = recipe.failure?.(plan, error);
      // The gateway's own refusal of what it would have sent (or every row skipped) with nothing to charge:
      // nothing went upstream, so nothing is recorded.
      if (isGatewayError(error) && !failure) void reservation.release().catch(() => undefined);
      else charge.settle('failed', failure?.costNanos ?? 0n, failure?.usage);
      throw error;
    }
    route.providerId = served.row.providerId;
    route.upstreamModel = served.row.upstreamModel;
    route.fallbacks = attempts;
    route.firstByteMs = Date.now() - startedAt;
    if (served.key?.recorded) route.keyId = served.key.id;
    return recipe.served(served.value, plan, charge);
  }

  /** What a media job would hold: exactly the figure its submission holds, by the same code. */
  async estimate<Input>(caller: Caller, recipe: JobRecipe<Input>, input: Input): Promise<bigint> {
    const model = this.dependencies.catalog.resolve(recipe.modelId(input));
    return (await recipe.plan(model, input, caller)).holdNanos;
  }

  /**
   * A media job's road up to its dispatch: resolve -> capability gate -> hold and queue (one transaction), on
   * the best row; its worker then dispatches, meters and settles it, and records its route.
   */
  async enqueue<Input>(
    context: RequestContext,
    recipe: JobRecipe<Input>,
    input: Input,
  ): Promise<{ job: MediaJobRow; dropped: string[] }> {
    const model = this.dependencies.catalog.resolve(recipe.modelId(input));
    const plan = await recipe.plan(model, input, context);
    if (plan.referenceUrls && plan.referenceUrls.size > 0) {
      // Their hosts are looked up: a key that could not pay for the job is refused first.
      await this.dependencies.ledger.admits({ ...context, amountNanos: plan.holdNanos });
      await plan.referenceUrls.checkAll(this.dependencies.checkReferenceUrl);
    }
    const job = await this.dependencies.submission.enqueue(context, {
      ...plan.job,
      // The job's prices are frozen at submission with their version, which its record will name.
      priceVersion: model.priceVersion,
      // As a request's route: the strategy that ordered the rows, when the model names one.
      ...(model.routingNamed ? { strategy: model.routing } : {}),
      modelId: model.modelId,
      row: plan.rows[0]!.row,
      holdNanos: plan.holdNanos,
    });
    return { job, dropped: plan.dropped };
  }
}
