import type { LedgerRepository } from '../storage/ledger-repository.ts';

export interface HoldReconcilerOptions {
  ledger: LedgerRepository;
  instanceId: string;
  heartbeatSeconds: number;
  /** A process silent for this long is taken for dead and its holds are released. */
  orphanHoldSeconds: number;
  /** An embedded database has exactly one live process, so every other process's hold is orphaned at once. */
  soleOwner: boolean;
  /** Sends again this process's settlements and releases that storage refused past their retries. */
  resendRefusedWrites?: () => Promise<void>;
  onError: (error: Error) => void;
  onReleased: (count: number) => void;
}

/**
 * Keeps this process's heartbeat and releases holds left by processes that died (SIGKILL, crash, lost
 * machine) without settling them: at start, then every heartbeat. At every heartbeat too, this process's own
 * holds whose settlement or release storage refused past its retries are settled or released: they stay held
 * only while storage refuses them, never until a restart.
 */
export class HoldReconciler {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: HoldReconcilerOptions) {}

  async start(): Promise<number> {
    const released = await this.sweep();
    this.timer = setInterval(() => {
      this.sweep().catch((error: Error) => this.options.onError(error));
    }, this.options.heartbeatSeconds * 1000);
    this.timer.unref();
    return released;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.options.ledger.forgetInstance(this.options.instanceId);
  }

  private async sweep(): Promise<number> {
    // Apart from the heartbeat: a refusal of either must not hold back the other.
    const resent = this.options.resendRefusedWrites?.().catch((error: Error) => this.options.onError(error));
    try {
      return await this.releaseOrphaned();
    } finally {
      await resent;
    }
  }

  private async releaseOrphaned(): Promise<number> {
    await this.options.ledger.heartbeat(this.options.instanceId);
    const released = await this.options.ledger.releaseOrphanedHolds(
      this.options.instanceId,
      this.options.soleOwner ? 0 : this.options.orphanHoldSeconds,
    );
    if (released > 0) this.options.onReleased(released);
    return released;
  }
}
