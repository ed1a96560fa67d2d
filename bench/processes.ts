// The benchmark's processes (fake upstream, our gateway, the bare proxy, Portkey's gateway) and what the kernel says about them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../test/support/free-port.ts';

const here = import.meta.dirname;

export interface Command {
  command: string;
  args: string[];
}

/**
 * How this folder's TypeScript runs under `node`: Node strips the types itself from 22.18 on; an older Node
 * (20) needs tsx to load the file, and what that file loads is compiled JavaScript still.
 */
function typeScriptLoader(node: string): string[] {
  const [major = 0, minor = 0] = nodeVersion(node).slice(1).split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 18) ? ['--disable-warning=ExperimentalWarning'] : ['--import', 'tsx'];
}

/**
 * How our gateway is started, in this one place: the node binary (`--runtime-node`, default the harness's own)
 * running the compiled gateway through `gateway-process.ts`.
 */
export function gatewayCommand(node: string, nodeFlags: string[]): Command {
  // The V8 flag `npm start` and bin/gateway.js run the gateway with.
  return {
    command: node,
    args: ['--max-semi-space-size=16', ...nodeFlags, ...typeScriptLoader(node), path.join(here, 'gateway-process.ts')],
  };
}

/** The bare proxy (`bare-proxy.ts`) on the same node binary as the gateways, with Node's default flags. */
export function bareProxyCommand(node: string): Command {
  return { command: node, args: [...typeScriptLoader(node), path.join(here, 'bare-proxy.ts')] };
}

/** The billed floor (`billed-floor.ts`) on the same node binary, with the V8 flag our gateway runs with. */
export function billedFloorCommand(node: string): Command {
  return {
    command: node,
    args: ['--max-semi-space-size=16', ...typeScriptLoader(node), path.join(here, 'billed-floor.ts')],
  };
}

/** Portkey's gateway as its package runs it under Node: the `bin` of `@portkey-ai/gateway` (its rollup build). */
export function portkeyCommand(node: string, port: number): Command {
  const require = createRequire(import.meta.url);
  const packageDir = path.dirname(require.resolve('@portkey-ai/gateway/package.json'));
  const { bin } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { bin: string };
  // Headless: no static console UI; it listens on every interface at --port.
  return { command: node, args: [path.join(packageDir, bin), `--port=${port}`, '--headless'] };
}

export function nodeVersion(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

export interface Started {
  child: ChildProcess;
  /** The JSON object of the process's first stdout line (fake upstream, bare proxy), the gateway's ready message, or {} (Portkey). */
  info: Record<string, string>;
  /** Milliseconds from spawn to that first line, printed right after the server listens (or to the first accepted connection). */
  readyMs: number;
}

/** The fake OpenAI upstream (`fake-upstream.ts`) every benchmark calls, on the harness's own node. */
export function startFakeUpstream(): Promise<Started> {
  return startWithReadyLine(
    { command: process.execPath, args: ['--import', 'tsx', path.join(here, 'fake-upstream.ts')] },
    {},
  );
}

/** Spawns one of this folder's processes and waits for the JSON line it prints once it listens; later lines go to stderr. */
export async function startWithReadyLine({ command, args }: Command, env: Record<string, string>): Promise<Started> {
  const started = process.hrtime.bigint();
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code, signal) =>
      reject(new Error(`${args.at(-1)} exited with ${code ?? signal} before listening`)),
    );
    child.once('error', reject);
  });
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  lines.on('line', (line) => process.stderr.write(`${line}\n`));
  return { child, info: JSON.parse(first) as Record<string, string>, readyMs };
}

/**
 * Spawns our gateway process with its stdout, where the gateway writes its log as `npm start` does, appended to
 * `logFile`, and waits for the `ready` message it sends over IPC once it listens.
 */
export async function startGateway(
  { command, args }: Command,
  env: Record<string, string>,
  logFile: string,
): Promise<Started> {
  const started = process.hrtime.bigint();
  const log = openSync(logFile, 'a');
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', log, 'inherit', 'ipc'] });
  closeSync(log);
  const info = await new Promise<Record<string, string>>((resolve, reject) => {
    const onMessage = (message: { ready?: Record<string, string> }) => {
      if (!message.ready) return;
      child.off('message', onMessage);
      resolve(message.ready);
    };
    child.on('message', onMessage);
    child.once('exit', (code, signal) =>
      reject(new Error(`${args.at(-1)} exited with ${code ?? signal} before listening (its log: ${logFile})`)),
    );
    child.once('error', reject);
  });
  return { child, info, readyMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** Spawns Portkey and polls its port until it accepts a connection (its console banner comes a second later, after a spinner). */
export async function startPortkey(node: string): Promise<Started & { url: string }> {
  const port = await freePort();
  const started = process.hrtime.bigint();
  const { command, args } = portkeyCommand(node, port);
  // Its stdout is the banner and request logging, not read; stderr is kept for the failure message.
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  child.once('error', (error) => {
    exited = true;
    errors += error.message;
  });
  const deadline = Date.now() + 30_000;
  while (!(await accepts(port))) {
    if (exited || Date.now() > deadline) throw new Error(`Portkey's gateway did not listen on ${port}: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { child, info: {}, readyMs: Number(process.hrtime.bigint() - started) / 1e6, url: `http://127.0.0.1:${port}` };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

let requestIds = 0;

/** One request to our gateway process over IPC; the answer carries the request's id. */
export function ask<T>(child: ChildProcess, message: Record<string, unknown>): Promise<T> {
  const id = ++requestIds;
  return new Promise((resolve, reject) => {
    const onMessage = (answer: { id?: number; error?: string }) => {
      if (answer.id !== id) return;
      child.off('message', onMessage);
      if (answer.error) reject(new Error(answer.error));
      else resolve(answer as T);
    };
    child.on('message', onMessage);
    child.send({ ...message, id });
  });
}

// --- /proc: what the kernel counts for a process and its descendants (a database server it started, say) ---

/** Parent of every process, from /proc/<pid>/stat (the fields after the command name, which may hold spaces). */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  return parentOf;
}

/** `pid` and all its descendants. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents()) children.set(parent, [...(children.get(parent) ?? []), child]);
  const tree = [pid];
  for (let index = 0; index < tree.length; index++) tree.push(...(children.get(tree[index]!) ?? []));
  return tree;
}

/**
 * Proportional set size of one process in bytes (PSS: a page shared with other processes, such as a database
 * server's shared buffers, counts as its share), 0 when it is gone.
 */
function pssOf(pid: number): number {
  try {
    const kib = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return Number(kib ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Memory of a process and its descendants, in bytes: their PSS summed, so shared pages count once. */
export function treePss(pid: number, tree = processTree(pid)): number {
  return tree.reduce((total, member) => total + pssOf(member), 0);
}

let ticksPerSecond: number | undefined;

/** User plus system CPU time of a process and its descendants (those that have exited and been waited for included), in milliseconds (clock-tick resolution). */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((total, member) => total + cpuMsOf(member, true), 0);
}

/** User plus system CPU time of the process alone (all its threads), in milliseconds. */
export function ownCpuMs(pid: number): number {
  return cpuMsOf(pid, false);
}

function cpuMsOf(pid: number, withChildren: boolean): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime and cstime are fields 14 to 17 of stat, 12 to 15 after the command name. The
    // children's times keep what a descendant spent once it has exited (a database backend, an autovacuum
    // worker), so a tree's sum never goes back.
    const ticks =
      Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / ticksPerSecond;
  } catch {
    // gone meanwhile
    return 0;
  }
}

/** Samples the summed PSS of a process tree every `everyMs` until stopped; returns the highest sample. */
export function pssPeakSampler(pid: number, everyMs = 200): { stop(): number } {
  let peak = treePss(pid);
  let tree = processTree(pid);
  let samples = 0;
  const timer = setInterval(() => {
    // The tree is looked up again every tenth sample: reading all of /proc is the costly part.
    if (++samples % 10 === 0) tree = processTree(pid);
    peak = Math.max(peak, treePss(pid, tree));
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, treePss(pid));
    },
  };
}
