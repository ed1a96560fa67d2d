import type { MediaJobsRepository } from '../storage/media-jobs-repository.ts';
import type { ObjectStore } from '../storage/object-store.ts';

export interface MediaRetentionOptions {
  jobs: MediaJobsRepository;
  store: ObjectStore;
  intervalMs: number;
  onError: (error: unknown) => void;
  onDeleted: (count: number) => void;
  clock?: () => Date;
}

/** Deletes archived media past its retention: the object first, then its asset row, so no row outlives its object unnoticed. */
export class MediaRetention {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(private readonly options: MediaRetentionOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      this.sweep().catch((error: unknown) => this.options.onError(error));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping?.catch(() => undefined);
  }

  /** One pass over everything expired; answers how many assets were deleted. */
  sweep(): Promise<number> {
    this.sweeping ??= this.deleteExpired().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async deleteExpired(): Promise<number> {
    const { jobs, store } = this.options;
    let deleted = 0;
    for (;;) {
      const expired = await jobs.expiredAssets((this.options.clock ?? (() => new Date()))(), 100);
      for (const asset of expired) {
        await store.delete(asset.objectKey);
        await jobs.deleteAsset(asset.id);
      }
      deleted += expired.length;
      if (expired.length < 100) break;
    }
    if (deleted > 0) this.options.onDeleted(deleted);
    return deleted;
  }
}
