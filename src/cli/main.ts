import { Command, InvalidArgumentError } from 'commander';
import { Catalog } from '../catalog/catalog.ts';
import { EnvironmentError, readEnvironment, type Environment } from '../config/environment.ts';
import { ConfigError, loadConfigFile } from '../config/load-config.ts';
import { GatewaySecretMismatchError } from '../identity/gateway-secret.ts';
import { type AccountRole, isAccountRole } from '../domain/account-role.ts';
import { GatewayError, isGatewayError } from '../domain/errors.ts';
import { classifyError } from '../http/error-envelope.ts';
import {
  CreditGrantBody,
  LimitsPatch,
  NewAccountBody,
  NewKeyBody,
  PasswordBody,
  RateLimitsPatch,
} from '../http/schemas.ts';
import type { TSchema } from 'typebox';
import { bodyValidator } from '../http/validation.ts';
import type { Core } from '../core.ts';
import type { Logger } from 'pino';
import { createLogger } from '../telemetry/logger.ts';
import { DataDirInUseError } from '../storage/data-dir-lock.ts';
import { EmbeddedServerError } from '../storage/embedded-server.ts';
import { LegacyImportError } from '../storage/legacy-import.ts';
import { modelView } from '../surfaces/native/model-view.ts';

/** JSON's number syntax: what the API reads. `Number()` also reads `0x10`, `0b11`, `0o7` and `Infinity`. */
const jsonNumberSyntax = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** A number as typed, read as the API would read it in a JSON body; undefined when it is not one. */
function typedNumber(value: string): number | undefined {
  const trimmed = value.trim();
  if (!jsonNumberSyntax.test(trimmed)) return undefined;
  const number = Number(trimmed);
  return Number.isFinite(number) ? number : undefined;
}

function usd(value: string): number {
  const number = typedNumber(value);
  if (number === undefined) throw new InvalidArgumentError('expected a USD amount such as 5 or 0.25');
  return number;
}

const spendWindows = ['daily', 'weekly', 'monthly', 'total'] as const;
type SpendWindow = (typeof spendWindows)[number];

/** A spend cap as typed: a USD amount, or `none` to remove it. */
function spendCap(value: string): number | 'none' {
  return value.trim().toLowerCase() === 'none' ? 'none' : usd(value);
}

/** A rate limit as typed: a whole number, or `none` to remove it (sent as `null`, as in the API; commander would turn a parsed null into ''). */
function rateLimit(value: string): number | 'none' {
  if (value.trim().toLowerCase() === 'none') return 'none';
  const number = typedNumber(value);
  if (number === undefined || !Number.isInteger(number))
    throw new InvalidArgumentError('expected a whole number such as 60, or "none" to remove the limit');
  return number;
}

interface RateLimitOptions {
  requestsPerMinute?: number | 'none';
  tokensPerMinute?: number | 'none';
  concurrentRequests?: number | 'none';
}

type RateLimitChanges = Partial<Record<keyof RateLimitOptions, number | null>>;

/** The three rate-limit options, on `keys create` and on the commands that change limits. */
function withRateLimitOptions(command: Command): Command {
  return command
    .option('--requests-per-minute <n>', 'requests per minute ("none" removes the limit)', rateLimit)
    .option('--tokens-per-minute <n>', 'input and output tokens per minute ("none" removes the limit)', rateLimit)
    .option('--concurrent-requests <n>', 'requests in flight at once ("none" removes the limit)', rateLimit);
}

function rateLimitsOf(options: RateLimitOptions): RateLimitChanges {
  const change = (value: number | 'none' | undefined) => (value === 'none' ? null : value);
  return withoutUndefined({
    requestsPerMinute: change(options.requestsPerMinute),
    tokensPerMinute: change(options.tokensPerMinute),
    concurrentRequests: change(options.concurrentRequests),
  });
}

/** A new key has no limit to remove: `none` there is refused rather than ignored. */
function newKeyRateLimits(options: RateLimitOptions): {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  concurrentRequests?: number;
} {
  const { requestsPerMinute, tokensPerMinute, concurrentRequests } = options;
  if (requestsPerMinute === 'none' || tokensPerMinute === 'none' || concurrentRequests === 'none') {
    throw new GatewayError(
      'GW_VALIDATION',
      'a new key has no rate limit to remove: leave the option out instead of "none"',
    );
  }
  return withoutUndefined({ requestsPerMinute, tokensPerMinute, concurrentRequests });
}

/** Options not given are left out, as a JSON body would leave them out. */
function withoutUndefined<T extends object>(input: T): T {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as T;
}

/** The HTTP API's own checks of the same input, so the CLI accepts exactly what the API accepts. */
function checked<T extends object>(schema: TSchema, input: T): T {
  const options = withoutUndefined(input);
  try {
    bodyValidator(schema, 'options')(options);
    return options;
  } catch (error) {
    throw new GatewayError('GW_VALIDATION', classifyError(error, 0).messages.join('; '));
  }
}

/** More than any password the API takes (256 characters of up to 4 bytes): reading stops there. */
const maxPasswordLineBytes = 4096;

/**
 * A password given on standard input (`--password-stdin`): its first line, without the line ending, so that it is
 * never an argument `ps` or a shell's history shows. Piped (`printf '%s\n' "$PASSWORD" | gateway ...`) or typed.
 */
async function passwordFromStdin(): Promise<string> {
  process.stdin.setEncoding('utf8');
  let text = '';
  let ended = false;
  for await (const chunk of process.stdin) {
    text += String(chunk);
    const end = text.indexOf('\n');
    if (end !== -1) {
      text = text.slice(0, end);
      ended = true;
      break;
    }
    if (Buffer.byteLength(text) > maxPasswordLineBytes) break;
  }
  const password = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (!ended && password === '')
    throw new GatewayError('GW_VALIDATION', '--password-stdin: standard input held no password (give it one line)');
  return password;
}

/** `--password` (visible to `ps`) or `--password-stdin` (read from standard input), at most one of them. */
async function givenPassword(options: { password?: string; passwordStdin?: boolean }): Promise<string | undefined> {
  if (options.password !== undefined && options.passwordStdin)
    throw new GatewayError('GW_VALIDATION', 'give the password with --password or --password-stdin, not both');
  return options.passwordStdin ? passwordFromStdin() : options.password;
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A command's logger: warnings and above unless LOG_LEVEL asks for another level than the default. */
function commandLogger(environment: Environment): Logger {
  return createLogger({
    ...environment,
    logLevel: environment.logLevel === 'info' ? 'warn' : environment.logLevel,
  });
}

/**
 * Runs one command against the database with the services of a server, then closes it. The start refuses a
 * GATEWAY_SECRET that is not the database's, but for `secret adopt` (`adoptingSecret`).
 */
async function withCore(
  environment: Environment,
  work: (core: Core) => Promise<void>,
  { adoptingSecret = false }: { adoptingSecret?: boolean } = {},
): Promise<void> {
  const logger = commandLogger(environment);
  // The database and the services load only for a command that uses them: --help, a refused option and
  // `models list` start in a fraction of the time.
  const { openCore } = await import('../core.ts');
  const core = await openCore({ environment, logger, adoptingSecret });
  try {
    await work(core);
  } finally {
    await core.close();
  }
}

/**
 * Opens the database, which applies its migrations (under the advisory lock every process takes for them), and
 * closes it: only the storage, so neither the master secret nor gateway.yaml is read.
 */
async function migrate(environment: Environment): Promise<void> {
  // Storage errors are logged without the values they carry, as the core logs them.
  const { withSafeErrorLogging } = await import('../storage/logged-errors.ts');
  const logger = withSafeErrorLogging(commandLogger(environment));
  const { openStorage } = await import('../storage/database.ts');
  const { storageOptionsFor } = await import('../core.ts');
  const storage = await openStorage(storageOptionsFor(environment, logger));
  await storage.close();
}

function program(environment: Environment): Command {
  const cli = new Command('gateway').description('Multi-modal model gateway').showHelpAfterError();

  cli
    .command('serve')
    .description(
      'start the HTTP server (PORT, HOST, DATA_DIR, DATABASE_URL, GATEWAY_CONFIG); SIGHUP reloads GATEWAY_CONFIG in this process (signal every process), SIGTERM stops it',
    )
    .action(async () => {
      const { serve } = await import('../main.ts');
      await serve(environment);
    });

  cli
    .command('migrate')
    .description('apply database migrations and exit (needs neither GATEWAY_SECRET nor gateway.yaml)')
    .action(async () => {
      await migrate(environment);
      process.stdout.write('migrations applied\n');
    });

  const accounts = cli.command('accounts').description('manage accounts');
  accounts
    .command('create')
    .description('create an account')
    .requiredOption('--email <email>', 'login email')
    .option(
      '--password <password>',
      'password for the dashboard (omit for a key-only account); other users of the machine can read it in `ps`: prefer --password-stdin',
    )
    .option('--password-stdin', 'read the password from standard input (its first line)')
    .option('--credits <usd>', 'opening credits in USD', usd, 0)
    .action(async (options: { email: string; password?: string; passwordStdin?: boolean; credits: number }) => {
      const input = checked(NewAccountBody, {
        email: options.email,
        password: await givenPassword(options),
        credits: options.credits,
      });
      return withCore(environment, async (core) => {
        print(
          await core.services.audit.operatorChange(
            { action: 'account.create', subject: (account) => ({ type: 'account', id: account.id }), request: input },
            () =>
              core.services.accounts.createAccount({
                email: input.email,
                password: input.password,
                creditsUsd: input.credits,
              }),
          ),
        );
      });
    });

  cli
    .command('credits')
    .description('manage credits')
    .command('add')
    .description('add credits to an account (a negative amount removes them)')
    .requiredOption('--account <accountId>', 'account id')
    .requiredOption('--amount <usd>', 'USD amount', usd)
    .option('--note <text>', 'why, kept with the grant')
    .action((options: { account: string; amount: number; note?: string }) => {
      const grant = checked(CreditGrantBody, { amount: options.amount, note: options.note });
      return withCore(environment, async (core) => {
        const change = {
          action: 'account.credits',
          subject: { type: 'account', id: options.account },
          request: grant,
        } as const;
        print({
          creditBalance: await core.services.audit.operatorChange(change, () =>
            core.services.accounts.addCredits(options.account, grant.amount, grant.note ?? null),
          ),
        });
      });
    });

  accounts
    .command('role')
    .description(
      "set an account's role: operator opens the operator console (dashboard and /api/operator/v1) to its sessions, user closes it",
    )
    .argument('<account>', 'the account, by id or by email')
    .argument('<role>', 'operator or user', (value: string) => {
      if (!isAccountRole(value)) throw new InvalidArgumentError('the role is "operator" or "user"');
      return value;
    })
    .action((account: string, role: AccountRole) =>
      withCore(environment, async (core) => {
        const { id } = await core.services.accounts.findAccount(account);
        print(
          await core.services.audit.operatorChange(
            { action: 'account.role', subject: { type: 'account', id }, request: { role } },
            () => core.services.accounts.setRole(id, role),
          ),
        );
      }),
    );

  accounts
    .command('set-password')
    .description(
      "set an account's password (signup's rules), whether it had one or not, and end the account's sessions; the password is read from standard input, never taken as an argument",
    )
    .argument('<account>', 'the account, by id or by email')
    .requiredOption('--password-stdin', 'read the password from standard input (its first line)')
    .action(async (account: string) => {
      const input = checked(PasswordBody, { password: await passwordFromStdin() });
      return withCore(environment, async (core) => {
        const { id, email } = await core.services.accounts.findAccount(account);
        await core.services.audit.operatorChange(
          { action: 'account.password', subject: { type: 'account', id }, request: input },
          () => core.services.accounts.setPassword(id, input.password),
        );
        print({ id, email, passwordSet: true });
      });
    });

  withRateLimitOptions(
    accounts
      .command('rate-limits')
      .description("set or remove an account's rate limits, the default and ceiling of each of its keys"),
  )
    .requiredOption('--account <accountId>', 'account id')
    .action((options: RateLimitOptions & { account: string }) => {
      const input = checked(RateLimitsPatch, rateLimitsOf(options));
      return withCore(environment, async (core) => {
        const change = {
          action: 'account.rate-limits',
          subject: { type: 'account', id: options.account },
          request: input,
        } as const;
        print(
          await core.services.audit.operatorChange(change, () =>
            core.services.apiKeys.setAccountRateLimits(options.account, input),
          ),
        );
      });
    });

  const keys = cli.command('keys').description('manage API keys');
  withRateLimitOptions(
    keys
      .command('create')
      .description('create an API key and print it once')
      .requiredOption('--account <accountId>', 'account id')
      .requiredOption('--name <name>', 'display name')
      .option('--daily <usd>', 'daily spend cap (UTC day)', usd)
      .option('--weekly <usd>', 'weekly spend cap (ISO week)', usd)
      .option('--monthly <usd>', 'monthly spend cap (calendar month)', usd)
      .option('--total <usd>', 'lifetime spend cap', usd),
  ).action(
    (
      options: RateLimitOptions & {
        account: string;
        name: string;
        daily?: number;
        weekly?: number;
        monthly?: number;
        total?: number;
      },
    ) => {
      const { daily, weekly, monthly, total } = options;
      const rateLimits = newKeyRateLimits(options);
      const input = checked(NewKeyBody, {
        name: options.name,
        limits: withoutUndefined({ daily, weekly, monthly, total }),
        ...(Object.keys(rateLimits).length > 0 ? { rateLimits } : {}),
      });
      return withCore(environment, async (core) => {
        print(
          await core.services.audit.operatorChange(
            { action: 'api-key.create', subject: (key) => ({ type: 'api-key', id: key.id }), request: input },
            () => core.services.apiKeys.create(options.account, input),
          ),
        );
      });
    },
  );
  withRateLimitOptions(
    keys
      .command('rate-limits')
      .description(
        "set or remove an API key's rate limits (the smaller of a key's and its account's applies; a removed one falls back to its account's)",
      ),
  )
    .requiredOption('--key <keyId>', 'key id (not the raw key)')
    .action((options: RateLimitOptions & { key: string }) => {
      const input = checked(RateLimitsPatch, rateLimitsOf(options));
      return withCore(environment, async (core) => {
        const change = {
          action: 'api-key.rate-limits',
          subject: { type: 'api-key', id: options.key },
          request: input,
        } as const;
        print(
          await core.services.audit.operatorChange(change, () =>
            core.services.apiKeys.setRateLimits(null, options.key, input),
          ),
        );
      });
    });
  keys
    .command('spend-caps')
    .description("set or remove an API key's spend caps (`none` removes one; the windows left out keep theirs)")
    .requiredOption('--key <keyId>', 'key id (not the raw key)')
    .option('--daily <usd>', 'daily spend cap (UTC day), or none', spendCap)
    .option('--weekly <usd>', 'weekly spend cap (ISO week), or none', spendCap)
    .option('--monthly <usd>', 'monthly spend cap (calendar month), or none', spendCap)
    .option('--total <usd>', 'lifetime spend cap, or none', spendCap)
    .action((options: { key: string } & Partial<Record<SpendWindow, number | 'none'>>) => {
      const caps: Partial<Record<SpendWindow, number | null>> = {};
      for (const window of spendWindows) {
        const cap = options[window];
        if (cap !== undefined) caps[window] = cap === 'none' ? null : cap;
      }
      const input = checked(LimitsPatch, caps);
      return withCore(environment, async (core) => {
        const change = {
          action: 'api-key.spend-caps',
          subject: { type: 'api-key', id: options.key },
          request: input,
        } as const;
        print(
          await core.services.audit.operatorChange(change, () =>
            core.services.apiKeys.setLimits(null, options.key, input),
          ),
        );
      });
    });
  keys
    .command('revoke')
    .description('revoke an API key for good')
    .requiredOption('--key <keyId>', 'key id (not the raw key)')
    .action((options: { key: string }) =>
      withCore(environment, async (core) => {
        const change = {
          action: 'api-key.revoke',
          subject: { type: 'api-key', id: options.key },
          request: {},
        } as const;
        await core.services.audit.operatorChange(change, () => core.services.apiKeys.revoke(null, options.key));
        print({ revoked: options.key });
      }),
    );

  cli
    .command('secret')
    .description('the record of GATEWAY_SECRET the database keeps (a verifier, never the secret)')
    .command('adopt')
    .description(
      'make this GATEWAY_SECRET the one the database is used with, in place of another: every process and command with any other secret then refuses to start, and what was stored under the previous secret (API keys, sessions, provider keys added at runtime, webhook signing secrets) stops working; processes already running keep the secret they started with until restarted',
    )
    .requiredOption('--yes', 'confirm: what was stored under the previous secret stops working')
    .action(() =>
      withCore(
        environment,
        async (core) => {
          const outcome = await core.services.audit.operatorChange(
            { action: 'config.secret-adopt', subject: { type: 'config', id: null }, request: {} },
            () => core.gatewaySecret.adopt(),
          );
          print({
            adopted: true,
            previous: { stored: 'none', replaced: 'another secret', unchanged: 'this secret' }[outcome],
          });
        },
        { adoptingSecret: true },
      ),
    );

  cli
    .command('models')
    .description('inspect the catalog')
    .command('list')
    .description('list the active models of gateway.yaml')
    .option('--json', 'print the full Model objects')
    .action((options: { json?: boolean }) => {
      const config = loadConfigFile(environment.configPath, environment.variables);
      const models = new Catalog(config).list();
      if (options.json) return print(models.map(modelView));
      for (const model of models) {
        process.stdout.write(
          `${model.modelId}\t${model.outputModalities.join(',')}\t${model.rows.map((row) => row.providerId).join(',')}\n`,
        );
      }
    });
  return cli;
}

try {
  await program(readEnvironment(process.env)).parseAsync(process.argv);
} catch (error) {
  const known =
    error instanceof EnvironmentError ||
    error instanceof ConfigError ||
    error instanceof DataDirInUseError ||
    error instanceof EmbeddedServerError ||
    error instanceof LegacyImportError ||
    error instanceof GatewaySecretMismatchError ||
    isGatewayError(error);
  process.stderr.write(`gateway: ${known ? (error as Error).message : (error as Error).stack}\n`);
  process.exit(1);
}
