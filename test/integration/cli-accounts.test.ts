/**
 * CLI commands that change accounts and keys (roles, passwords, rate limits, revocation), on a database of the run's
 * server: what they store and refuse holds whichever PostgreSQL server stores it, so this file is not in the database
 * suite (that a command starts the embedded default in DATA_DIR itself is cli.test.ts's).
 */
import { describe, expect, it } from 'vitest';
import { useGatewayCli } from '../support/gateway-cli.ts';
import { startGatewayChild } from '../support/gateway-child.ts';
import { adminHeaders } from '../support/http-helpers.ts';
import { shippedConfigPath } from '../support/test-gateway.ts';

describe('gateway CLI: roles, passwords, rate limits and revocation', () => {
  const commands = useGatewayCli({ embeddedInDataDir: false });
  const { cli, cliWithInput } = commands;
  const refusal = (pattern: RegExp) => ({ code: 1, stderr: expect.stringMatching(pattern) });

  it("sets an account's password read from standard input, never an argument, audited without it, and it signs in with it", {
    timeout: 180_000,
  }, async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'keyonly@example.com')) as { id: string };
    const password = 'a password piped to the CLI 42';
    const output = await cliWithInput(
      `${password}\n`,
      'accounts',
      'set-password',
      'KeyOnly@Example.com',
      '--password-stdin',
    );
    expect(JSON.parse(output)).toEqual({ id: account.id, email: 'keyonly@example.com', passwordSet: true });
    // `accounts create` reads one the same way (a line ending of \r\n too).
    const created = 'another piped password 7';
    JSON.parse(
      await cliWithInput(`${created}\r\n`, 'accounts', 'create', '--email', 'piped@example.com', '--password-stdin'),
    );

    await expect(cli('accounts', 'set-password', account.id)).rejects.toMatchObject(
      refusal(/required option '--password-stdin' not specified/),
    );
    await expect(cli('accounts', 'set-password', account.id, '--password-stdin', password)).rejects.toMatchObject(
      refusal(/too many arguments/),
    );
    await expect(
      cliWithInput('short\n', 'accounts', 'set-password', account.id, '--password-stdin'),
    ).rejects.toMatchObject(refusal(/options\.password must NOT have fewer than 8 characters/));
    await expect(cliWithInput('', 'accounts', 'set-password', account.id, '--password-stdin')).rejects.toMatchObject(
      refusal(/standard input held no password/),
    );
    await expect(
      cliWithInput(`${password}\n`, 'accounts', 'set-password', 'nobody@example.com', '--password-stdin'),
    ).rejects.toMatchObject(refusal(/account "nobody@example.com" not found/));
    await expect(
      cliWithInput(
        `${password}\n`,
        'accounts',
        'create',
        '--email',
        'both@example.com',
        '--password',
        password,
        '--password-stdin',
      ),
    ).rejects.toMatchObject(refusal(/--password or --password-stdin, not both/));
    expect(await cli('accounts', 'set-password', '--help')).toContain('standard input');

    const server = await startGatewayChild({
      configPath: shippedConfigPath,
      dataDir: commands.dataDir,
      ...(commands.env.DATABASE_URL ? { databaseUrl: commands.env.DATABASE_URL } : {}),
    });
    try {
      const login = (email: string, secret: string) =>
        fetch(`${server.url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password: secret }),
        });
      expect((await login('keyonly@example.com', password)).status).toBe(200);
      expect((await login('piped@example.com', created)).status).toBe(200);
      expect((await login('piped@example.com', `${created}\r`)).status).toBe(401);
      const audit = await fetch(
        `${server.url}/api/admin/v1/audit-log?accountId=${account.id}&action=account.password`,
        {
          headers: adminHeaders,
        },
      );
      const entries = ((await audit.json()) as { results: Array<Record<string, unknown>> }).results;
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ actor: { kind: 'operator' }, subject: { type: 'account', id: account.id } });
      expect(entries[0]).not.toHaveProperty('request');
      expect(JSON.stringify(entries)).not.toContain(password);
    } finally {
      await server.kill('SIGTERM');
    }
    expect(server.output()).not.toContain(password);
  });

  it("sets an account's role by email or id, refuses any other role, and says how in --help", async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'role@example.com')) as { id: string };
    expect(JSON.parse(await cli('accounts', 'role', 'Role@Example.com', 'operator'))).toMatchObject({
      id: account.id,
      role: 'operator',
    });
    expect(JSON.parse(await cli('accounts', 'role', account.id, 'user'))).toMatchObject({ role: 'user' });
    await expect(cli('accounts', 'role', account.id, 'root')).rejects.toMatchObject({
      stderr: expect.stringContaining('"operator" or "user"'),
    });
    await expect(cli('accounts', 'role', 'nobody@example.com', 'operator')).rejects.toMatchObject({
      stderr: expect.stringContaining('not found'),
    });
    expect(await cli('accounts', 'role', '--help')).toContain('operator console');
  });

  it('sets rate limits on a new key, changes and removes them on a key and on an account, and refuses bad ones', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'limited@example.com')) as { id: string };
    const key = JSON.parse(
      await cli(
        'keys',
        'create',
        '--account',
        account.id,
        '--name',
        'limited',
        '--requests-per-minute',
        '60',
        '--concurrent-requests',
        '2',
      ),
    ) as { id: string; rateLimits: object };
    expect(key.rateLimits).toEqual({ requestsPerMinute: 60, concurrentRequests: 2 });
    const changed = JSON.parse(
      await cli(
        'keys',
        'rate-limits',
        '--key',
        key.id,
        '--tokens-per-minute',
        '10000',
        '--requests-per-minute',
        'none',
      ),
    ) as { rateLimits: object };
    expect(changed.rateLimits).toEqual({ tokensPerMinute: 10000, concurrentRequests: 2 });
    expect(
      JSON.parse(await cli('accounts', 'rate-limits', '--account', account.id, '--requests-per-minute', '30')),
    ).toEqual({ requestsPerMinute: 30 });
    await expect(cli('keys', 'rate-limits', '--key', key.id, '--requests-per-minute', '0')).rejects.toMatchObject(
      refusal(/options\.requestsPerMinute must be >= 1/),
    );
    await expect(cli('keys', 'rate-limits', '--key', key.id, '--requests-per-minute', 'many')).rejects.toMatchObject(
      refusal(/expected a whole number/),
    );
    await expect(cli('keys', 'rate-limits', '--key', key.id)).rejects.toMatchObject(
      refusal(/options must NOT have fewer than 1 properties/),
    );
    await expect(
      cli('keys', 'create', '--account', account.id, '--name', 'x', '--tokens-per-minute', 'none'),
    ).rejects.toMatchObject(refusal(/no rate limit to remove/));

    const capped = JSON.parse(
      await cli('keys', 'spend-caps', '--key', key.id, '--daily', '2.5', '--total', 'none'),
    ) as { limits: object };
    expect(capped.limits).toEqual({ daily: 2.5 });
    await expect(cli('keys', 'spend-caps', '--key', key.id, '--weekly', '0x10')).rejects.toMatchObject(
      refusal(/expected a USD amount/),
    );
    await expect(cli('keys', 'spend-caps', '--key', key.id)).rejects.toMatchObject(
      refusal(/options must NOT have fewer than 1 properties/),
    );
  });

  it('says a key is already revoked when it is revoked twice', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'twice@example.com')) as { id: string };
    const key = JSON.parse(await cli('keys', 'create', '--account', account.id, '--name', 'once')) as { id: string };
    await cli('keys', 'revoke', '--key', key.id);
    await expect(cli('keys', 'revoke', '--key', key.id)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`API key "${key.id}" is already revoked`),
    });
  });
});
