import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { createLogger, maxLogBufferBytes, requestLogger } from '../../src/telemetry/logger.ts';

const dirs: string[] = [];
const logFile = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-logger-'));
  dirs.push(dir);
  return path.join(dir, 'gateway.log');
};
const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the gateway's log", () => {
  it('writes its lines in batches, and what is buffered within a second when the gateway is quiet', async () => {
    const file = logFile();
    const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), file);
    logger.info({ event: 'generation', generationId: 'gen_1' }, 'generation recorded');
    logger.info({ event: 'generation', generationId: 'gen_2' }, 'generation recorded');
    await pause(150);
    // A write per line would have landed by now; these two wait for the batch or the interval.
    expect(readFileSync(file, 'utf8')).toBe('');
    const deadline = Date.now() + 5000;
    while (linesOf(file).length < 2 && Date.now() < deadline) await pause(50);
    expect(linesOf(file).map((line) => line.generationId)).toEqual(['gen_1', 'gen_2']);
  });

  it('keeps every line whole and in order across many batches, text outside ASCII included', async () => {
    const file = logFile();
    const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), file);
    // Several batches' worth, each line with characters of two, three and four bytes in UTF-8.
    const count = 5000;
    for (let index = 0; index < count; index += 1)
      logger.info({ index, model: 'modèle-東京-🚀' }, 'generation recorded');
    await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
    const lines = linesOf(file);
    expect(lines.map((line) => line.index)).toEqual(Array.from({ length: count }, (_, index) => index));
    expect(new Set(lines.map((line) => line.model))).toEqual(new Set(['modèle-東京-🚀']));
  });

  it('writes everything on a flush, also when less than a batch is left behind the batch being written', async () => {
    const file = logFile();
    const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), file);
    // A batch and a little: the first batch is being written when the flush is asked for, and what follows it is
    // less than a batch.
    const line = 'x'.repeat(1000);
    const count = 80;
    for (let index = 0; index < count; index += 1) logger.info({ index, line }, 'filler');
    await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
    expect(linesOf(file).map((entry) => entry.index)).toEqual(Array.from({ length: count }, (_, index) => index));
  });

  it('writes what it buffered when the process exits', () => {
    const file = logFile();
    const script = [
      "import { readEnvironment } from './src/config/environment.ts';",
      "import { createLogger } from './src/telemetry/logger.ts';",
      `const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), ${JSON.stringify(file)});`,
      "logger.info({ event: 'generation', generationId: 'gen_last' }, 'generation recorded');",
      'process.exit(0);',
    ].join('\n');
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
    });
    expect(linesOf(file)).toEqual([expect.objectContaining({ generationId: 'gen_last', msg: 'generation recorded' })]);
  });

  it('keeps the gateway running, and lets it exit, when its destination refuses every write (a full disk)', () => {
    const script = [
      "import { readEnvironment } from './src/config/environment.ts';",
      "import { createLogger } from './src/telemetry/logger.ts';",
      // /dev/full answers every write with ENOSPC.
      "const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), '/dev/full');",
      "for (let index = 0; index < 2000; index += 1) logger.info({ index, line: 'x'.repeat(100) }, 'filler');",
      // Past the periodic flush, so that writes have failed before the exit.
      "setTimeout(() => { logger.info('after the failure'); console.log('still serving'); process.exit(0); }, 1500);",
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.error, 'the process ended').toBeUndefined();
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('still serving');
    expect(run.stderr.match(/the log destination refuses writes \(ENOSPC\)/g)).toHaveLength(1);
  });

  it('drops what a reader that does not keep up leaves no room for, and says how many once it catches up', async () => {
    // A pipe nobody reads yet: the writes block once its 64 KiB are full, as on a stuck log collector.
    const fifo = path.join(path.dirname(logFile()), 'stuck.pipe');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), fifo);
      const line = 'x'.repeat(1000);
      const lines = Math.ceil((maxLogBufferBytes * 1.5) / line.length);
      for (let index = 0; index < lines; index += 1) logger.info({ index, line }, 'filler');
      let read = '';
      const chunk = Buffer.alloc(1 << 20);
      const deadline = Date.now() + 30_000;
      while (!read.includes('log lines dropped') && Date.now() < deadline) {
        let size = 0;
        try {
          size = readSync(reader, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        }
        // Only the tail matters: the report comes after every line that was kept.
        read = (read + chunk.toString('utf8', 0, size)).slice(-100_000);
        if (size === 0) await pause(5);
      }
      const report = read.split('\n').find((text) => text.includes('log lines dropped'));
      expect(report, 'the report of dropped lines').toBeDefined();
      const { droppedLines } = JSON.parse(report!) as { droppedLines: number };
      // What did not fit in the bounded buffer is dropped; what fitted is kept.
      expect(droppedLines).toBeGreaterThan(lines / 4);
      expect(droppedLines).toBeLessThan(lines);
    } finally {
      closeSync(reader);
    }
  });
});

describe("a request's logger", () => {
  it('writes the lines a child bound to the request id writes, byte for byte, secrets censored alike', async () => {
    const file = logFile();
    const logger = createLogger(readEnvironment({ LOG_LEVEL: 'info' }), file);
    const write = (log: ReturnType<typeof requestLogger>) => {
      log.info({ event: 'x', count: 1, nested: { apiKey: 'gwk_plain', kept: true } }, 'an object');
      log.warn('a message alone');
      log.error(new Error('an error'));
      log.info({ headers: { authorization: 'Bearer plain', accept: 'json' }, token: 'plain' }, 'credentials');
      log.child({ job: 'j1' }).info({ step: 2 }, 'a child of it');
    };
    write(logger.child({ reqId: 'req-1' }));
    write(requestLogger(logger, { reqId: 'req-1' }, {}));
    logger.info({ event: 'y' }, 'no request');
    await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      // The time and an error's stack (its line numbers) differ between the two writes.
      .map((line) => line.replace(/"time":\d+,/, '').replace(/"stack":"(?:[^"\\]|\\.)*"/, '"stack":""'));
    expect(lines).toHaveLength(11);
    expect(lines.slice(5, 9)).toEqual(lines.slice(0, 4));
    // A child of a request's logger writes its own bindings before the request id: the same fields.
    expect(JSON.parse(lines[9]!)).toEqual(JSON.parse(lines[4]!));
    expect(lines[0]).toMatch(/"hostname":"[^"]*","reqId":"req-1","event":"x"/);
    expect(lines.join('\n')).not.toMatch(/plain/);
    expect(JSON.parse(lines[10]!)).not.toHaveProperty('reqId');
  });
});
