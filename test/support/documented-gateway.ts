import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RouteOptions } from 'fastify';
import pino from 'pino';
import { readEnvironment } from '../../src/config/environment.ts';
import { loadConfigFile } from '../../src/config/load-config.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';
import { shippedConfigPath, testAdminToken, testSecret } from './test-gateway.ts';

/** The parts of an OpenAPI document the tests read. */
export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: Record<string, unknown> }>;
  requestBody?: { content: Record<string, OpenApiMedia & { schema: Record<string, unknown> }> };
  responses: Record<string, { $ref?: string; description?: string; content?: Record<string, OpenApiMedia> }>;
}

/** A body or answer of one media type. */
export interface OpenApiMedia {
  schema?: Record<string, unknown>;
  example?: unknown;
  examples?: Record<string, unknown>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, Record<string, unknown>>;
    responses: Record<string, { content: Record<string, { schema: Record<string, unknown> }> }>;
    securitySchemes: Record<string, unknown>;
  };
}

export interface DocumentedGateway {
  gateway: RunningGateway;
  /** Every route as the app registered it, seen by an onRoute hook added before any route. */
  routes: RouteOptions[];
  /** GET /openapi.json. */
  document: OpenApiDocument;
  /** A new account with credits and an API key of it. */
  fundedKey(credits?: number): Promise<string>;
  close(): Promise<void>;
}

let accountCounter = 0;

/** The gateway of the shipped gateway.yaml (its sandbox models answer without any provider), on a database of its own. */
export async function startDocumentedGateway(): Promise<DocumentedGateway> {
  const routes: RouteOptions[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-openapi-'));
  const environment = readEnvironment({
    DATA_DIR: dataDir,
    GATEWAY_SECRET: testSecret,
    GATEWAY_ADMIN_TOKEN: testAdminToken,
  });
  let database: TestDatabase | undefined;
  try {
    database = await createTestDatabase();
    const gateway = await createGateway({
      environment,
      config: loadConfigFile(shippedConfigPath, environment.variables),
      storage: database.options,
      logger: pino({ level: 'silent' }),
      onRoute: (route) => void routes.push({ ...route }),
    });
    await gateway.app.ready();
    const answer = await gateway.app.inject({ method: 'GET', url: '/openapi.json' });
    if (answer.statusCode !== 200) throw new Error(`GET /openapi.json answered ${answer.statusCode}: ${answer.body}`);
    const services = gateway.core.services;
    const owned = database;
    return {
      gateway,
      routes,
      document: answer.json(),
      fundedKey: async (credits = 10) => {
        const account = await services.accounts.createAccount({
          email: `openapi${++accountCounter}-${Date.now()}@example.com`,
          creditsUsd: credits,
        });
        return (await services.apiKeys.create(account.id, { name: 'openapi' })).key;
      },
      close: async () => {
        await gateway.close();
        await owned.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
