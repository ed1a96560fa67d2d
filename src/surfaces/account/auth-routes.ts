import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { normaliseEmail, type SessionGrant, WrongPasswordError } from '../../identity/account-service.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { answersNotStored, clearSessionCookies, issueSessionCookies } from '../../http/session-cookies.ts';
import { accountExample } from '../../http/examples.ts';
import { Email, Password } from '../../http/schemas.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { noCredential } from '../../http/openapi/security-schemes.ts';
import { AccountSchema } from './account-schemas.ts';
import { SignInThrottle } from './sign-in-throttle.ts';
import { refuseUnknownFields } from '../../http/validation.ts';

/** The services this surface uses, and only those. */
export type AuthServices = Pick<GatewayServices, 'accounts' | 'authenticator' | 'config' | 'limiterStore'>;

export const Credentials = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
/** A new session: its token (also set as the HttpOnly `gw_session` cookie, with the `gw_csrf` cookie) and the account. */
const Session = Type.Object(
  {
    token: Type.String({ description: 'The session token (`gws_…`), for Authorization: Bearer' }),
    account: AccountSchema,
  },
  { description: 'The session and its account' },
);
/** The owner's change of password: the current one (checked as a login checks it), and the new one (signup's rules). */
const PasswordChange = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: 256, description: 'The password the account has now' }),
    newPassword: Password,
  },
  { additionalProperties: false },
);
const passwordChangeExample = {
  currentPassword: 'correct horse battery staple',
  newPassword: 'a new and longer passphrase',
} satisfies Static<typeof PasswordChange>;
const signIn = {
  request: { email: accountExample.email, password: 'correct horse battery staple' } satisfies Static<
    typeof Credentials
  >,
  answer: { token: 'gws_Vb3nQ8xL2mK7pR4tW9yZ1cF6hJ0dS5aE', account: accountExample } satisfies Static<typeof Session>,
};

/**
 * The most a sign-up or sign-in body is read: an email and a password take at most about 3 KB even with every
 * character escaped. These routes answer any caller, without a credential, so they read no more than that
 * (the server's own limit, for model calls, is megabytes), nor more than the server's limit if it is lower.
 */
const credentialsBodyLimit = 16 * 1024;

export const authRoutes: FastifyPluginAsyncTypebox<{ services: AuthServices; secureCookies: boolean }> = async (
  app,
  { services, secureCookies },
) => {
  const issue = (reply: FastifyReply, grant: SessionGrant) => {
    issueSessionCookies(reply, grant, { secure: secureCookies });
    return { token: grant.token, account: grant.account };
  };
  refuseUnknownFields(app);
  const bodyLimit = Math.min(credentialsBodyLimit, services.config.server.bodyLimitBytes);
  const throttle = new SignInThrottle(services.config.accounts, services.limiterStore);
  app.addHook('onRequest', answersNotStored);
  // A refusal of the throttle carries its retry-after, which the error handler sends with every such GatewayError.
  app.post(
    '/auth/signup',
    {
      bodyLimit,
      config: { audit: { action: 'account.signup', subject: { type: 'account', from: 'answer' } } },
      schema: {
        summary: 'Create an account and sign in',
        description:
          'Opens an account with the email and password (when gateway.yaml allows self-signup) and starts its session: the token is answered and set as the `gw_session` cookie, with the `gw_csrf` cookie. Throttled per client address.',
        body: Credentials,
        security: noCredential,
        response: { 201: Session },
        documentedExample: signIn,
      },
    },
    async (request, reply) => {
      if (!services.config.accounts.selfSignup) {
        throw new GatewayError(
          'GW_FORBIDDEN',
          'self-signup is switched off on this gateway: ask its operator for an account',
        );
      }
      await throttle.admitSignup(request.ip);
      const grant = await services.accounts.signup(request.body.email, request.body.password);
      reply.code(201);
      return issue(reply, grant);
    },
  );

  app.post(
    '/auth/login',
    {
      bodyLimit,
      config: { audit: { action: 'session.sign-in', subject: { type: 'session', from: 'answer' } } },
      schema: {
        summary: 'Sign in',
        description:
          'Starts a session for the email and password: the token is answered and set as the `gw_session` cookie, with the `gw_csrf` cookie. Repeated failures for an email or a client address are throttled (429 with retry-after).',
        body: Credentials,
        security: noCredential,
        response: { 200: Session },
        documentedExample: signIn,
      },
    },
    async (request, reply) => {
      const email = normaliseEmail(request.body.email);
      await throttle.beginLogin(email, request.ip);
      try {
        const grant = await services.accounts.login(email, request.body.password);
        await throttle.loginSucceeded(email, request.ip);
        return issue(reply, grant);
      } catch (error) {
        if (!(error instanceof GatewayError && error.code === 'GW_INVALID_CREDENTIALS'))
          await throttle.loginAbandoned(email, request.ip);
        throw error;
      }
    },
  );

  app.put(
    '/account/password',
    {
      config: { audit: { action: 'account.password', subject: { type: 'account', from: 'caller' } } },
      schema: {
        summary: 'Change your password',
        description:
          "A signed-in session only (not an API key): the current password, then the new one (8 to 256 characters). Every other session of the account ends, in every process; this one stays signed in. A wrong current password answers 403 and changes nothing; wrong ones are counted with failed logins of the account's email and of the client address, and throttled as they are (429 with retry-after).",
        body: PasswordChange,
        response: { 204: noBody("The password changed; the account's other sessions ended") },
        documentedExample: { request: passwordChangeExample },
      },
      onRequest: requireCredential(services.authenticator, { acceptCookie: { secureCookies } }),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal.kind !== 'session')
        throw new GatewayError(
          'GW_SESSION_REQUIRED',
          'changing the password needs a signed-in session, not an API key',
        );
      const { email } = await services.accounts.getAccount(principal.accountId);
      await throttle.beginPasswordCheck(email, request.ip);
      try {
        await services.accounts.changePassword({
          accountId: principal.accountId,
          sessionTokenHash: principal.sessionTokenHash,
          currentPassword: request.body.currentPassword,
          newPassword: request.body.newPassword,
        });
        await throttle.loginSucceeded(email, request.ip);
      } catch (error) {
        // A wrong current password stays counted, as a failed login does.
        if (!(error instanceof WrongPasswordError)) await throttle.loginAbandoned(email, request.ip);
        throw error;
      }
      return reply.code(204).send();
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { audit: { action: 'session.sign-out', subject: { type: 'session', from: 'caller' } } },
      schema: {
        summary: 'Sign out',
        description:
          'Ends the session of the token or cookie sent, and clears its cookies. An API key has no session to end.',
        response: { 204: noBody('The session ended; its cookies are cleared') },
      },
      onRequest: requireCredential(services.authenticator, { acceptCookie: { secureCookies } }),
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal.kind !== 'session')
        throw new GatewayError('GW_SESSION_REQUIRED', 'logout ends a session: send the session token, not an API key');
      await services.accounts.logout(principal.sessionTokenHash);
      clearSessionCookies(reply, { secure: secureCookies });
      return reply.code(204).send();
    },
  );
};
