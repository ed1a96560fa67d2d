import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import {
  answersBeforeMarkers,
  brokenLinks,
  documentationFiles,
  repositoryRoot,
  runnableBlocks,
  shapeMismatches,
  shellScript,
  type RunnableBlock,
} from '../support/markdown-docs.ts';
import { parseDocument } from 'yaml';
import { shippedConfigPath, startTestGateway, testAdminToken, type TestGateway } from '../support/test-gateway.ts';

const run = promisify(execFile);
const files = documentationFiles();
const blocks = files.flatMap(runnableBlocks);

describe('documentation', () => {
  it.each(files)('%s: every relative link names a file (and heading) that exists', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('README.md stays a front page of at most 200 lines', () => {
    expect(readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8').split('\n').length - 1).toBeLessThanOrEqual(
      200,
    );
  });

  it('README.md names the test command CI runs (.ci/run runs npm test)', () => {
    expect(readFileSync(path.join(repositoryRoot, '.ci/run'), 'utf8')).toMatch(/^npm test$/m);
    expect(readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8')).toMatch(/^npm test\b/m);
  });
});

describe('runnable examples, against a gateway of the shipped gateway.yaml', () => {
  let gateway: TestGateway;
  let port: number;
  let workDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    port = await freePort();
    // The shipped gateway.yaml, but for how often a running video task is read (2 s by default): the examples
    // that wait for a video then wait for the sandbox's render, not for the next poll.
    const config = parseDocument(readFileSync(shippedConfigPath, 'utf8'));
    config.setIn(['jobs', 'taskPollMs'], 100);
    // PORT makes the download and polling links point at the port the examples reach.
    gateway = await startTestGateway({ configText: config.toString(), env: { PORT: String(port) } });
    await gateway.app.listen({ port, host: '127.0.0.1' });
    const signup = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'docs@example.com', password: 'a long password' },
    });
    const { token } = signup.json<{ token: string }>();
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'docs' },
    });
    const { key } = created.json<{ key: string }>();
    env = { ...process.env, KEY: key, TOKEN: token, ADMIN: testAdminToken } as Record<string, string>;
    workDir = mkdtempSync(path.join(tmpdir(), 'gw-docs-'));
  });

  afterAll(async () => {
    await gateway?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const pointed = (code: string) => code.replaceAll('localhost:8080', `127.0.0.1:${port}`);

  async function runShell(block: RunnableBlock): Promise<void> {
    const { script, shapes } = shellScript(pointed(block.code));
    const { stdout } = await run('bash', ['-c', script], { cwd: workDir, env, timeout: 60_000 });
    const answers = answersBeforeMarkers(stdout);
    expect(answers).toHaveLength(shapes.length);
    shapes.forEach((shape, index) => {
      const answer = answers[index]!;
      let parsed: unknown;
      try {
        parsed = JSON.parse(answer);
      } catch {
        throw new Error(`answer ${index + 1} is not JSON: ${answer}`);
      }
      expect(shapeMismatches(shape, parsed), `answer ${index + 1}: ${answer}`).toEqual([]);
    });
  }

  async function runTypeScript(block: RunnableBlock): Promise<void> {
    // Under the repository, so the SDKs' imports resolve from its node_modules.
    const directory = path.join(repositoryRoot, 'test-output', 'docs-examples');
    mkdirSync(directory, { recursive: true });
    const file = path.join(directory, `${block.file.replaceAll('/', '-')}-${block.line}.ts`);
    writeFileSync(file, pointed(block.code));
    // On Node's own type stripping, as a reader runs an example with the Node the gateway needs (`node file.ts`);
    // tsx's loader took as long again as the example.
    const { stdout } = await run(process.execPath, [file], {
      cwd: repositoryRoot,
      env,
      timeout: 60_000,
    });
    expect(stdout.trim()).not.toBe('');
  }

  it.each(blocks.map((block) => [`${block.file}:${block.line} (${block.language})`, block] as const))(
    '%s answers as its comments show',
    async (_name, block) => {
      await (block.language === 'sh' ? runShell(block) : runTypeScript(block));
    },
  );

  it("README's quick start, run twice, leaves one working key of its own and says when it fails", async () => {
    const quickStart = runnableBlocks('README.md').find((block) => block.code.includes('auth/signup'));
    expect(quickStart).toBeDefined();
    for (let round = 0; round < 2; round++) await runShell(quickStart!);
    const login = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'me@example.com', password: 'a long password' },
    });
    const keys = await gateway.request({
      url: '/api/v1/api-keys',
      headers: { authorization: `Bearer ${login.json<{ token: string }>().token}` },
    });
    expect(keys.json<Array<{ name: string }>>().map((item) => item.name)).toEqual(['quickstart']);
    // A gateway that is not there: the block says so instead of going on with an empty key.
    const { script } = shellScript(quickStart!.code.replaceAll('localhost:8080', '127.0.0.1:1'));
    const failed = await run('bash', ['-c', script], { cwd: workDir, env }).then(
      () => undefined,
      (error: { stderr: string }) => error,
    );
    expect(failed?.stderr).toMatch(/quick start failed/);
  });
});
