import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/catalog.ts';
import { RuntimeCatalog } from '../../src/catalog/runtime-catalog.ts';
import type { ModelEntry } from '../../src/config/config-schema.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { RuntimeCatalogRepository } from '../../src/storage/runtime-catalog-repository.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

/**
 * Price versions of gateway.yaml's prices, written by every process that starts (or reloads): processes that
 * start at once on one database, with the same file, add each version once, and a model whose prices did not
 * change gets no new version.
 */
describe('price versions of the file prices', () => {
  let database: TestDatabase;
  let storages: Storage[];

  const models = 40;
  const configText = (price: number) =>
    [
      'providers:',
      '  sandbox: { protocol: sandbox }',
      'models:',
      ...Array.from(
        { length: models },
        (_, index) =>
          `  - id: model-${index}\n    pricing: { inputPerMTok: ${price + index} }\n    providers: [{ provider: sandbox, model: echo }]`,
      ),
    ].join('\n');
  const fileOf = (price: number) => parseConfig(configText(price), 'gateway.yaml', {});

  /** A process's catalog on its own connection pool, as `openCore` builds it, not yet refreshed. */
  const processCatalog = (storage: Storage, fileModels: readonly ModelEntry[]) => {
    const config = fileOf(0);
    return new RuntimeCatalog({
      repository: new RuntimeCatalogRepository(storage.db),
      catalog: new Catalog(config),
      fileModels,
      providers: config.providers,
      announce: async () => undefined,
      logger: pino({ level: 'silent' }),
    });
  };

  const versionsPerModel = async () =>
    uncheckedRows<{ model_id: string; versions: number }>(
      storages[0]!.db,
      sql`SELECT model_id, count(*)::int AS versions FROM price_versions GROUP BY model_id ORDER BY model_id`,
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    storages = [];
    // One after the other: the first applies the migrations.
    for (let index = 0; index < 4; index++) storages.push(await openStorage(database.options));
  });

  afterAll(async () => {
    await Promise.all((storages ?? []).map((storage) => storage.close()));
    await database?.drop();
  });

  it('adds each version once when processes start at the same instant, and none for prices that did not change', async () => {
    for (const [round, price] of [1, 2, 3].entries()) {
      const { models: fileModels } = fileOf(price);
      const catalogs = storages.map((storage) => processCatalog(storage, fileModels));
      await Promise.all(catalogs.map((catalog) => catalog.refresh()));
      const counts = await versionsPerModel();
      expect(counts).toHaveLength(models);
      for (const { model_id, versions } of counts) expect(versions, model_id).toBe(round + 1);
      // Every process charges the one version the model has now.
      const charged = new Set(catalogs.map((catalog) => catalog.get('model-7').priceVersion));
      expect(charged.size).toBe(1);
      expect([...charged][0]).toMatch(/^price_/);
    }

    // The same file again (a restart, a reload that changed nothing else): no version is added.
    const again = storages.map((storage) => processCatalog(storage, fileOf(3).models));
    await Promise.all(again.map((catalog) => catalog.refresh()));
    for (const { versions } of await versionsPerModel()) expect(versions).toBe(3);
  });
});
