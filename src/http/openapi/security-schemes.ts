/** How a request proves who it is, as the document names it (README, Authentication). */
export const securitySchemes = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'An API key (`gwk_…`); wins over Authorization when both are sent',
  },
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key, or a session token (`gws_…`) from signup or login',
  },
  googApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-goog-api-key',
    description: 'An API key, as the official Gemini SDK sends it (gamma surface only)',
  },
  sessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'gw_session',
    description:
      'The session cookie set by signup and login (account and operator APIs only; a request that changes something must also echo the `gw_csrf` cookie in `x-csrf-token`)',
  },
  adminToken: { type: 'http', scheme: 'bearer', description: 'GATEWAY_ADMIN_TOKEN (admin API only)' },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'telemetry.metricsToken, when one is set (GET /metrics only)',
  },
} as const;

type SchemeName = keyof typeof securitySchemes;
type Requirement = Array<Record<string, string[]>>;

/** Any one of the alternatives will do. */
const anyOf = (...names: SchemeName[]): Requirement => names.map((name) => ({ [name]: [] }));

/** The document's default: every route needs an API key or a session token, except where a route says otherwise. */
export const keyOrSession = anyOf('apiKey', 'bearerAuth');
/** The gamma surface also takes the key in x-goog-api-key. */
export const keySessionOrGoogleKey = anyOf('apiKey', 'bearerAuth', 'googApiKey');
/** The account API also takes the session cookie. */
export const keySessionOrCookie = anyOf('apiKey', 'bearerAuth', 'sessionCookie');
export const adminOnly = anyOf('adminToken');
/** The operator API: a session of an operator account (its token, or the dashboard's cookie), never an API key. */
export const sessionOrCookie = anyOf('bearerAuth', 'sessionCookie');
/** No credential at all: probes, health, signed media links, signup and login, this document. */
export const noCredential: Requirement = [];
