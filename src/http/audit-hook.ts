import type { FastifyInstance, FastifyRequest, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { recordableRequest, type AuditAction, type AuditActor, type AuditSubjectType } from '../domain/audit-entry.ts';
import type { AuditFilter, AuditSubject, AuditTrail, SubjectState } from '../identity/audit-trail.ts';

/**
 * What a route changes, declared beside it (`config: { audit: ... }`): the action's name, and where the id of
 * what it changes is found: the path (`:accountId`, `:keyId`, `:taskId`), the caller's own account, or the answer (`id`,
 * or `account.id`) for what the route creates or signs into.
 */
export interface AuditedRoute {
  action: AuditAction;
  subject: { type: AuditSubjectType; from: 'path' | 'caller' | 'answer' };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route changes state: each answer of success leaves an entry in the audit log (http/audit-hook.ts). */
    audit?: AuditedRoute;
  }
  interface FastifyRequest {
    /** Set by the admin API's authentication (admin token) and the operator API's (an operator account's session). */
    operatorActing: boolean;
    /** The state of what an audited route changes, read before its handler ran. */
    auditBefore: SubjectState | null;
  }
}

/** Marks the request as the operator's (the admin token was checked). */
export function actAsOperator(request: FastifyRequest): void {
  request.operatorActing = true;
}

const accountPath = Compile(Type.Object({ accountId: Type.String() }));
const keyPath = Compile(Type.Object({ keyId: Type.String() }));
const taskPath = Compile(Type.Object({ taskId: Type.String() }));
const modelPath = Compile(Type.Object({ '*': Type.String() }));
const answerWithId = Compile(Type.Object({ id: Type.String() }));
const answerWithAccount = Compile(Type.Object({ account: Type.Object({ id: Type.String() }) }));

function idFromPath(request: FastifyRequest, type: AuditSubjectType): string | null {
  const { params } = request;
  if (type === 'api-key' || type === 'provider-key') return keyPath.Check(params) ? params.keyId : null;
  if (type === 'media-job') return taskPath.Check(params) ? params.taskId : null;
  if (type === 'model') return modelPath.Check(params) ? params['*'] : null;
  return accountPath.Check(params) ? params.accountId : null;
}

function answerOf(payload: unknown): unknown {
  if (typeof payload !== 'string') return undefined;
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
}

function idFromAnswer(payload: unknown): string | null {
  const answer = answerOf(payload);
  if (answerWithId.Check(answer)) return answer.id;
  return answerWithAccount.Check(answer) ? answer.account.id : null;
}

const configDiff = Compile(Type.Record(Type.String(), Type.Unknown()));

/** A configuration reload is kept as the diff it answered: there is no stored configuration to read back. */
function configAfter(payload: unknown): SubjectState | undefined {
  const answer = answerOf(payload);
  return configDiff.Check(answer) ? { state: { configDiff: answer }, accountId: null } : undefined;
}

function subjectOf(request: FastifyRequest, audited: AuditedRoute, payload: unknown): AuditSubject {
  const { type, from } = audited.subject;
  if (from === 'path') return { type, id: idFromPath(request, type) };
  if (from === 'caller') return { type, id: request.principal?.accountId ?? null };
  if (type === 'config') return { type, id: null };
  return { type, id: idFromAnswer(payload) };
}

/** Who made the request: the operator, the caller, or (signing up or in) the account it signed into. */
function actorOf(request: FastifyRequest, accountId: string | null): AuditActor {
  const { principal } = request;
  // An operator account's session (the operator console) is named; the admin token is the operator alone.
  if (request.operatorActing)
    return principal ? { kind: 'operator', accountId: principal.accountId } : { kind: 'operator' };
  if (principal?.kind === 'key')
    return { kind: 'account', accountId: principal.accountId, apiKeyId: principal.apiKeyId };
  if (principal) return { kind: 'account', accountId: principal.accountId };
  if (accountId !== null) return { kind: 'account', accountId };
  throw new Error(`audited route ${request.routeOptions.url} answered without an operator, a caller or an account`);
}

/**
 * The one place the audit log is written from: every route declared `audit` has the state of what it changes
 * read before its handler runs and after it answered with success, and the entry (who, what before and after,
 * the request's body without secrets, the client's address and the request id) written before the answer
 * leaves. A failed write fails the answer, so a success always has its entry. Answers that fail change
 * nothing and leave none. Registered on the root before any surface, so it sees every route as it is added.
 */
export function recordChanges(app: FastifyInstance, trail: AuditTrail): void {
  app.decorateRequest('operatorActing', false);
  app.decorateRequest('auditBefore', null);
  // The hooks join only the routes that declare `audit`: every other request (a generation) runs none of them.
  app.addHook('onRoute', (route) => {
    const audited = route.config?.audit;
    if (!audited) return;
    const readBefore: preHandlerAsyncHookHandler = async (request) => {
      if (audited.subject.from === 'answer') return;
      request.auditBefore = await trail.stateOf(subjectOf(request, audited, undefined));
    };
    const writeEntry: onSendHookHandler = async (request, reply, payload) => {
      if (reply.statusCode >= 300) return payload;
      await trail.recordChange({
        actor: (accountId) => actorOf(request, accountId),
        action: audited.action,
        subject: subjectOf(request, audited, payload),
        before: request.auditBefore,
        ...(audited.subject.type === 'config' ? { after: configAfter(payload) } : {}),
        request: recordableRequest(request.body),
        clientAddress: request.ip,
        requestId: request.id,
      });
      return payload;
    };
    route.preHandler = [...listOf(route.preHandler), readBefore];
    route.onSend = [...listOf(route.onSend), writeEntry];
  });
}

/** A route's hooks of one kind, as a list (Fastify takes one, several, or none). */
function listOf<Hook>(hooks: Hook | Hook[] | undefined): Hook[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/** The time range of an audit log query, as dates (the query's schema checked both are ISO 8601). */
export function auditMoments(query: { since?: string; until?: string }): Pick<AuditFilter, 'since' | 'until'> {
  return {
    ...(query.since === undefined ? {} : { since: new Date(query.since) }),
    ...(query.until === undefined ? {} : { until: new Date(query.until) }),
  };
}
