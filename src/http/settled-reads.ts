import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import type { CreditLedger } from '../billing/credit-ledger.ts';
import { principalOf } from './authentication.ts';

/**
 * The one gate of every read of an account's money (balance, key spend, usage records and daily spend, the
 * dashboard's account and key pages): before answering, waits for the settlements this process is still
 * writing for the caller's account (bounded by `ledger.settlementWaitMs`), so a client's read shows the
 * charge of every answer it already has from this process. Writes show no spend and do not wait.
 * Registered after authentication, as a preHandler: a request refused for its credential or its query
 * answers at once.
 */
export function afterOwnSettlements(ledger: Pick<CreditLedger, 'settledFor'>) {
  return async (request: FastifyRequest): Promise<void> => {
    if (isRead(request)) await ledger.settledFor(principalOf(request).accountId);
  };
}

/** Reads wait; writes show no spend and do not. */
const isRead = (request: FastifyRequest) => request.method === 'GET' || request.method === 'HEAD';

const namesAccount = Compile(Type.Object({ accountId: Type.String() }));

/** The account a request names in its path, else in its query. */
function accountNamed(request: FastifyRequest): string | undefined {
  for (const part of [request.params, request.query]) if (namesAccount.Check(part)) return part.accountId;
  return undefined;
}

/**
 * The same gate for the operator's reads (admin token or operator session): the account named in the path or
 * the query, or, for a read across accounts, every account this process has settlements pending for.
 */
export function afterSettlementsRead(ledger: Pick<CreditLedger, 'settledFor' | 'settledForAll'>) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!isRead(request)) return;
    const accountId = accountNamed(request);
    await (accountId === undefined ? ledger.settledForAll() : ledger.settledFor(accountId));
  };
}
