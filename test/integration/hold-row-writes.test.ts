/**
 * A request's hold row (credit leases off) whose settlement or release storage refuses: it is sent again while the
 * refusal may pass, the hold kept meanwhile, and at every heartbeat of the hold reconciler once its retries are
 * spent, so the hold never stays until a restart. A settlement storage refuses for good is released, and a
 * release refused too is sent again the same way (both refused used to leave the hold until the process stopped).
 */
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CreditLedger } from '../../src/billing/credit-ledger.ts';
import type { Reservation } from '../../src/billing/reservation.ts';
import { holds } from '../../src/storage/schema.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

function serverError(code: string, message: string): pg.DatabaseError {
  const error = new pg.DatabaseError(message, 0, 'error');
  error.code = code;
  return error;
}
const lockTimeout = () => serverError('55P03', 'canceling statement due to lock timeout');
const checkViolation = () => serverError('23514', 'new row violates check constraint');

describe('hold rows whose settlement or release storage refuses', () => {
  let gateway: TestGateway;
  let ledger: CreditLedger;
  const failures: unknown[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway();
    ledger = new CreditLedger(gateway.gateway.core.upkeep.ledger, 'hold-row-writes', {
      reportFailure: (error) => failures.push(error),
      reportLeaseFailure: (error) => failures.push(error),
      writeRetryMs: [1, 1],
    });
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await gateway?.close();
  });

  const holdExists = async (reservation: Reservation) =>
    (await gateway.gateway.core.storage.db.select().from(holds).where(eq(holds.id, reservation.id))).length === 1;

  async function reserved(): Promise<Reservation> {
    const { keyId, accountId } = await gateway.createFundedKey({ credits: 1 });
    return ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: 1_000n, modelId: 'sandbox-echo' });
  }

  it('settles a hold whose settlement timed out past its retries at a later heartbeat, charging it', async () => {
    const repository = gateway.gateway.core.upkeep.ledger;
    const reservation = await reserved();
    const settle = vi.spyOn(repository, 'settle').mockRejectedValue(lockTimeout());
    const release = vi.spyOn(repository, 'release');
    const settled = reservation.settle({ costNanos: 400n, modality: 'text', status: 'succeeded' });
    await expect.poll(() => settle.mock.calls.length).toBe(3);
    await ledger.resendRefusedWrites();
    expect(settle.mock.calls.length).toBe(4);
    expect(release).not.toHaveBeenCalled();
    expect(await holdExists(reservation)).toBe(true);
    settle.mockRestore();
    release.mockRestore();
    await ledger.resendRefusedWrites();
    expect(await settled).toMatchObject({ costNanos: 400n, holdWasOutstanding: true });
    expect(await holdExists(reservation)).toBe(false);
  });

  it('releases, at a later heartbeat, a hold whose settlement was refused for good and whose release timed out', async () => {
    const repository = gateway.gateway.core.upkeep.ledger;
    const reservation = await reserved();
    const settle = vi.spyOn(repository, 'settle').mockRejectedValue(checkViolation());
    const release = vi.spyOn(repository, 'release').mockRejectedValue(lockTimeout());
    const settled = reservation.settle({ costNanos: 400n, modality: 'text', status: 'succeeded' });
    await expect.poll(() => release.mock.calls.length).toBe(3);
    expect(settle.mock.calls.length).toBe(1);
    expect(await holdExists(reservation)).toBe(true);
    settle.mockRestore();
    release.mockRestore();
    await ledger.resendRefusedWrites();
    await expect(settled).rejects.toThrow('check constraint');
    expect(await holdExists(reservation)).toBe(false);
  });

  it('releases, at a later heartbeat, a hold whose release timed out past its retries', async () => {
    const repository = gateway.gateway.core.upkeep.ledger;
    const reservation = await reserved();
    const release = vi.spyOn(repository, 'release').mockRejectedValue(lockTimeout());
    const released = reservation.release();
    await expect.poll(() => release.mock.calls.length).toBe(3);
    expect(await holdExists(reservation)).toBe(true);
    release.mockRestore();
    await ledger.resendRefusedWrites();
    await released;
    expect(await holdExists(reservation)).toBe(false);
  });
});
