/**
 * CLI commands that change accounts and keys (roles, rate limits, revocation), on the embedded default: what they
 * store and refuse holds whichever PostgreSQL server stores it, so this file is not in the database suite.
 */
import { describe, expect, it } from 'vitest';
import { useGatewayCli } from '../support/gateway-cli.ts';

describe('gateway CLI: roles, rate limits and revocation', () => {
  const commands = useGatewayCli();
  const { cli } = commands;

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
    const refusal = (pattern: RegExp) => ({ code: 1, stderr: expect.stringMatching(pattern) });
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
