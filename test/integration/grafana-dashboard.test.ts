import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const dashboardPath = path.resolve(import.meta.dirname, '../../deploy/grafana/gateway-dashboard.json');

describe('the Grafana dashboard of deploy/', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: sandboxConfigYaml() });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('queries only metrics the gateway exports, so it cannot silently show nothing', async () => {
    const dashboard = JSON.parse(readFileSync(dashboardPath, 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const scraped = (await gateway.request({ method: 'GET', url: '/metrics' })).body;
    const exported = new Set(
      [...scraped.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!],
      ),
    );
    const queried = dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((target) =>
        [...target.expr.matchAll(/\b(gateway_[a-z0-9_]+)/g)].map(([, name]) => ({ panel: panel.title, name: name! })),
      ),
    );
    expect(queried.length).toBeGreaterThan(10);
    for (const { panel, name } of queried) expect(exported.has(name), `${panel}: ${name}`).toBe(true);
  });
});
