import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { loadConfigFile } from '../../src/config/load-config.ts';
import { freePort } from '../support/free-port.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const root = path.resolve(import.meta.dirname, '../..');
const deploy = path.join(root, 'deploy');
const run = promisify(execFile);

/** What an operator exports before `docker compose up` (docs/deployment.md); every other variable takes its default. */
const operatorEnvironment: Record<string, string> = {
  GATEWAY_SECRET: 'a-secret-of-at-least-thirty-two-characters',
  MINIO_ROOT_PASSWORD: 'minio-password',
};

/** Compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `$$`. */
function interpolate(value: unknown, variables: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
      // biome-ignore lint/complexity/useMaxParams: String.prototype.replace passes each capture group
      (match, name: string | undefined, operator: string | undefined, argument: string | undefined) => {
        if (match === '$$') return '$';
        const given = variables[name!];
        const unset = operator?.startsWith(':') ? !given : given === undefined;
        if (!unset) return given!;
        if (operator?.endsWith('?')) throw new Error(`compose needs ${name}: ${argument}`);
        return operator ? argument! : '';
      },
    );
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, variables));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolate(item, variables)]));
  return value;
}

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  deploy?: { replicas: number };
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  command?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
}

const compose = interpolate(
  parse(readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'), { merge: true }),
  operatorEnvironment,
) as { services: Record<string, Service> };
const services = compose.services;
const gateway = services.gateway!;
const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
/** The last stage: the image that runs. */
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

/** The host file mounted at `target` in a service (paths relative to deploy/, as compose reads them). */
function mountedFile(service: Service, target: string): string {
  const volume = (service.volumes ?? []).find((entry) => entry.split(':')[1] === target);
  expect(volume, `a volume mounts ${target}`).toBeDefined();
  return path.resolve(deploy, volume!.split(':')[0]!);
}

describe('deploy/compose.yaml and deploy/gateway.yaml', () => {
  it('runs two gateway replicas, built from the repository Dockerfile, behind a load balancer', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['create-bucket', 'gateway', 'lb', 'minio', 'postgres']),
    );
    expect(gateway.deploy?.replicas).toBe(2);
    expect(existsSync(path.join(path.resolve(deploy, gateway.build!.context), gateway.build!.dockerfile))).toBe(true);
    expect(services.lb!.image).toMatch(/^nginx:/);
  });

  it('gives the gateways an environment and a gateway.yaml their own loaders accept: PostgreSQL and the S3 bucket', () => {
    const environment = readEnvironment(gateway.environment!);
    expect(environment.configPath).toBe('/etc/gateway/gateway.yaml');
    const config = loadConfigFile(mountedFile(gateway, environment.configPath), environment.variables);
    expect(config.media.store).toBe('s3');
    const s3 = config.media.s3!;
    // The bucket the init container makes, on the MinIO service, with its credentials.
    const bucketMaker = services['create-bucket']!;
    expect(s3.bucket).toBe(bucketMaker.environment!.S3_BUCKET);
    expect(bucketMaker.command!.join('\n')).toContain('mc mb --ignore-existing "store/$S3_BUCKET"');
    expect(new URL(s3.endpoint!).host).toBe('minio:9000');
    expect(services.minio!.command).toEqual(['server', '/data']);
    expect(s3.accessKeyId).toBe(services.minio!.environment!.MINIO_ROOT_USER);
    expect(s3.secretAccessKey?.reveal()).toBe(operatorEnvironment.MINIO_ROOT_PASSWORD);
    // Clients download from MinIO's published port, which links are presigned for.
    expect(services.minio!.ports).toContain(`${new URL(s3.publicEndpoint!).port}:9000`);
    expect(s3.forcePathStyle).toBe(true);
  });

  it('points DATABASE_URL at the PostgreSQL service (16 or later) with its own database and user, and waits for it', () => {
    const database = new URL(readEnvironment(gateway.environment!).databaseUrl!);
    const postgres = services.postgres!;
    expect(database.hostname).toBe('postgres');
    expect(database.username).toBe(postgres.environment!.POSTGRES_USER);
    expect(decodeURIComponent(database.password)).toBe(postgres.environment!.POSTGRES_PASSWORD);
    expect(database.pathname).toBe(`/${postgres.environment!.POSTGRES_DB}`);
    expect(Number(/^postgres:(\d+)/.exec(postgres.image!)![1])).toBeGreaterThanOrEqual(16);
    expect(gateway.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      'create-bucket': { condition: 'service_completed_successfully' },
    });
  });

  it('points REDIS_URL at the Redis service, which the gateways wait for, so rate limits hold across the replicas', () => {
    const redis = new URL(readEnvironment(gateway.environment!).redisUrl!.reveal());
    expect(redis.protocol).toBe('redis:');
    expect(redis.hostname).toBe('redis');
    expect(services.redis!.image).toMatch(/^redis:\d/);
    expect(gateway.depends_on).toMatchObject({ redis: { condition: 'service_healthy' } });
  });

  it('load-balances every replica on the port the image listens on', () => {
    const nginx = readFileSync(mountedFile(services.lb!, '/etc/nginx/nginx.conf'), 'utf8');
    const port = /^ENV[^\n]*\bPORT=(\d+)/m.exec(runtimeStage.replace(/\\\n\s*/g, ' '))![1];
    expect(nginx).toMatch(new RegExp(`server gateway:${port} resolve`));
    expect(nginx).toMatch(/proxy_buffering off;/);
    const listen = /listen (\d+);/.exec(nginx)![1];
    expect(services.lb!.ports!.some((mapping) => mapping.endsWith(`:${listen}`))).toBe(true);
  });
});

describe('Dockerfile', () => {
  const packageJson = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };

  it('builds on the Node the package pins, in stages, and runs as an unprivileged user on 0.0.0.0:8080', () => {
    expect(dockerfile).toContain(`ARG NODE_VERSION=${packageJson.dependencies.node}`);
    expect(dockerfile.match(/^FROM node:\$\{NODE_VERSION\}-slim/gm)).toHaveLength(3);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(runtimeStage).toMatch(/^USER node$/m);
    expect(runtimeStage).toMatch(/HOST=0\.0\.0\.0/);
    expect(runtimeStage).toMatch(/^EXPOSE 8080$/m);
    expect(runtimeStage).toMatch(/^HEALTHCHECK [^\n]*\\\n[^\n]*\/livez/m);
    expect(runtimeStage).toMatch(/^CMD \["node", "--max-semi-space-size=16", "bin\/gateway\.js", "serve"\]$/m);
  });

  it('copies only files that exist and that .dockerignore lets into the build context', () => {
    const allowed = readFileSync(path.join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1));
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((match) => match[1]!.split(' '));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(path.join(root, source)), source).toBe(true);
      expect(
        allowed.some((entry) => source === entry || source.startsWith(`${entry}/`)),
        `${source} is in the build context`,
      ).toBe(true);
    }
  });

  describe('its HEALTHCHECK command', () => {
    let started: TestGateway;
    let port: number;
    const script = JSON.parse(/HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    const check = (onPort: number) =>
      run(script[0] === 'node' ? process.execPath : script[0]!, script.slice(1), {
        env: { ...process.env, PORT: String(onPort) },
      }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? -1,
      );

    beforeAll(async () => {
      started = await startTestGateway();
      port = await freePort();
      await started.app.listen({ port, host: '127.0.0.1' });
    });
    afterAll(async () => started?.close());

    it('passes against a live gateway and fails where none answers', async () => {
      expect(await check(port)).toBe(0);
      expect(await check(await freePort())).toBe(1);
    });
  });
});
