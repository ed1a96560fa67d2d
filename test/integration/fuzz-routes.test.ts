/**
 * Property-based fuzzing of every HTTP route the gateway registers (and of paths it does not).
 *
 * For random methods, paths, query strings, headers and bodies, three properties must hold:
 *   1. the answer is 2xx or 4xx, never 5xx, and it comes (each inject has a time limit);
 *   2. every 4xx body is exactly the spec's error envelope {errors, status, success, path, timestamp, error},
 *      its `error` (and beta's top-level `type`) in the shape of the path's surface;
 *   3. a rejected (4xx) request changes no stored row: a digest of every table is taken before and after.
 *
 * Credentials are valid in a good share of the cases, so the handlers behind authentication and validation
 * are reached too. After an accepted mutating request (which may revoke the credential key, end the session or
 * fill the key quota) the fixtures are repaired before the next case.
 *
 * Every string field, query value and path id also comes with U+0000 or a lone surrogate spliced in, and
 * bodies with such a character in a field name or a `__proto__`, `constructor` or `prototype` field in any
 * object (test/support/hostile-text.ts): storage cannot hold that text, so it must be refused, never a 5xx.
 */
import { METHODS } from 'node:http';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayServices } from '../../src/gateway/services.ts';
import { surfaceOf } from '../../src/telemetry/surfaces.ts';
import { poisonArb, poisoned, withUnstorable } from '../support/hostile-text.ts';
import { startTestGateway, testAdminToken, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

// ---------------------------------------------------------------------------------------------------------------
// Fixtures: two real accounts, each with a session and an API key, plus spare keys of the main account.

interface Identity {
  accountId: string;
  email: string;
  password: string;
  keyId: string;
  key: string;
  session: string;
}

let testGateway: TestGateway;
let services: GatewayServices;
let main: Identity;
let other: Identity;
/** Unrevoked keys of the main account other than its credential key, with their raw values. */
let spareKeys: { id: string; key: string }[] = [];
/** A fresh account per run of the credit-sequence property. */
let scratchAccountId = '';
let scratchCounter = 0;

const requestTimeoutMs = 10_000;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** FUZZ_SCALE=10 multiplies every numRuns, for a longer hunt outside CI (add --testTimeout=600000). */
const runScale = process.env.FUZZ_SCALE ? Number(process.env.FUZZ_SCALE) : 1;
const timeLimitMs = 40_000 * runScale;

async function signupIdentity(email: string, password: string): Promise<Identity> {
  const signup = await testGateway.request({
    method: 'POST',
    url: '/api/v1/auth/signup',
    payload: { email, password },
  });
  expect(signup.statusCode, signup.body).toBe(201);
  const { token, account } = signup.json<{ token: string; account: { id: string } }>();
  const created = await testGateway.request({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { authorization: `Bearer ${token}` },
    payload: { name: 'fuzz credential' },
  });
  expect(created.statusCode, created.body).toBe(201);
  const { id, key } = created.json<{ id: string; key: string }>();
  return { accountId: account.id, email, password, keyId: id, key, session: token };
}

/**
 * Puts the fixtures back after an accepted request: a live credential key and session for both accounts, and a
 * few spare keys of the main account. Keys are not trimmed otherwise, so the account drifts up to the key limit
 * and creations meet the 403 as well as the 201 (random revocations bring it down again).
 */
async function repairFixtures(): Promise<void> {
  const maxKeys = services.config.accounts.maxApiKeys;
  for (const who of [main, other]) {
    const keys = await services.apiKeys.list(who.accountId);
    const credential = keys.find((key) => key.id === who.keyId);
    if (!credential) {
      const newest = keys[keys.length - 1];
      if (keys.length >= maxKeys && newest) await services.apiKeys.revoke(null, newest.id);
      const created = await services.apiKeys.create(who.accountId, { name: 'fuzz credential' });
      who.keyId = created.id;
      who.key = created.key;
    } else if (!credential.isActive) {
      await services.apiKeys.update(null, who.keyId, { isActive: true });
      // As the routes do: forget the cached "disabled" answer now rather than when the storage event arrives.
      services.authenticator.handleEvent({ type: 'key-changed', keyId: who.keyId });
    }
    const session = await services.authenticator.authenticate(who.session, 'bearer').catch(() => undefined);
    if (!session) who.session = (await services.accounts.login(who.email, who.password)).token;
  }
  const spares = (await services.apiKeys.list(main.accountId))
    .filter((key) => key.id !== main.keyId)
    .map((key) => key.id);
  while (spares.length < 3)
    spares.push((await services.apiKeys.create(main.accountId, { name: `spare ${spares.length}` })).id);
  spareKeys = await Promise.all(
    spares.map(async (id) => ({ id, key: await services.apiKeys.reveal(main.accountId, id) })),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Table digests (property 3).

const tables = ['accounts', 'api_keys', 'sessions', 'holds', 'generations', 'credit_grants'] as const;
type Digest = Record<(typeof tables)[number], string>;
const digestQuery = sql.raw(
  `SELECT ${tables.map((table) => `(SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM ${table} t) AS ${table}`).join(', ')}`,
);

async function digest(): Promise<Digest> {
  const [row] = await uncheckedRows<Digest>(testGateway.gateway.core.storage.db, digestQuery);
  if (!row) throw new Error('digest query returned no row');
  return row;
}

// ---------------------------------------------------------------------------------------------------------------
// Request descriptions. Everything that depends on the live fixtures (ids, tokens) is described symbolically and
// resolved just before the request, so the generated values stay printable and replayable.

type CredentialKind =
  | 'none'
  | 'main-session-bearer'
  | 'main-session-cookie'
  | 'main-key-header'
  | 'main-key-bearer'
  | 'main-key-and-bad-bearer'
  | 'spare-key'
  | 'other-session'
  | 'other-key'
  | 'admin'
  | 'admin-and-key'
  | 'garbage-key-header'
  | 'garbage-bearer'
  | 'odd-scheme'
  | 'garbage-cookie'
  | 'prefixed-garbage';

interface CredentialSpec {
  kind: CredentialKind;
  pick: number;
  garbage: string;
}

type IdKind =
  | 'main-key'
  | 'spare-key'
  | 'other-key'
  | 'main-account'
  | 'other-account'
  | 'scratch-account'
  | 'well-formed-unknown'
  | 'garbage';

interface IdSpec {
  kind: IdKind;
  pick: number;
  garbage: string;
}

interface BodySpec {
  contentType: string | undefined;
  payload: string | undefined;
}

interface RouteDef {
  method: string;
  template: string;
  body?: () => fc.Arbitrary<Record<string, unknown>>;
  query?: boolean;
}

interface FuzzRequest {
  method: string;
  template: string;
  keyId: IdSpec;
  accountId: IdSpec;
  wildcard: string;
  query: string;
  credential: CredentialSpec;
  extraHeaders: Record<string, string>;
  body: BodySpec;
}

function resolveId(spec: IdSpec, wanted: 'key' | 'account'): string {
  switch (spec.kind) {
    case 'main-key':
      return main.keyId;
    case 'spare-key':
      return spareKeys.length > 0 ? spareKeys[spec.pick % spareKeys.length]!.id : main.keyId;
    case 'other-key':
      return other.keyId;
    case 'main-account':
      return main.accountId;
    case 'other-account':
      return other.accountId;
    case 'scratch-account':
      return scratchAccountId;
    case 'well-formed-unknown':
      return `${wanted === 'key' ? 'key' : 'acct'}_${spec.garbage.replace(/[^A-Za-z0-9]/g, '') || 'unknown'}`;
    case 'garbage':
      return spec.garbage;
  }
}

function credentialHeaders(spec: CredentialSpec): Record<string, string> {
  switch (spec.kind) {
    case 'none':
      return {};
    case 'main-session-bearer':
      return { authorization: `Bearer ${main.session}` };
    case 'main-session-cookie':
      return { cookie: `gw_session=${main.session}` };
    case 'main-key-header':
      return { 'x-api-key': main.key };
    case 'main-key-bearer':
      return { authorization: `bearer ${main.key}` };
    case 'main-key-and-bad-bearer':
      return { 'x-api-key': main.key, authorization: `Bearer ${spec.garbage}` };
    case 'spare-key':
      return { 'x-api-key': spareKeys.length > 0 ? spareKeys[spec.pick % spareKeys.length]!.key : main.key };
    case 'other-session':
      return { authorization: `Bearer ${other.session}` };
    case 'other-key':
      return { 'x-api-key': other.key };
    case 'admin':
      return { authorization: `Bearer ${testAdminToken}` };
    case 'admin-and-key':
      return { authorization: `Bearer ${testAdminToken}`, 'x-api-key': main.key };
    case 'garbage-key-header':
      return { 'x-api-key': spec.garbage };
    case 'garbage-bearer':
      return { authorization: `Bearer ${spec.garbage}` };
    case 'odd-scheme':
      return { authorization: spec.garbage };
    case 'garbage-cookie':
      return { cookie: spec.garbage };
    case 'prefixed-garbage':
      return spec.pick % 2 === 0
        ? { 'x-api-key': `gwk_${spec.garbage}` }
        : { authorization: `Bearer gws_${spec.garbage}` };
  }
}

function resolve(request: FuzzRequest): InjectOptions {
  const path = request.template
    .replace(':keyId', () => encodeLoosely(resolveId(request.keyId, 'key'), false))
    .replace(':accountId', () => encodeLoosely(resolveId(request.accountId, 'account'), false))
    // Generation ids: an existing key's id has the right form and names no generation; garbage is garbage.
    .replace(':generationId', () => encodeLoosely(resolveId(request.keyId, 'key'), false))
    .replace('*', () => request.wildcard);
  const headers: Record<string, string> = { ...request.extraHeaders, ...credentialHeaders(request.credential) };
  if (request.body.contentType !== undefined) headers['content-type'] = request.body.contentType;
  const options: InjectOptions = {
    method: request.method as InjectOptions['method'],
    url: path + request.query,
    headers,
  };
  if (request.body.payload !== undefined) options.payload = request.body.payload;
  return options;
}

// ---------------------------------------------------------------------------------------------------------------
// Value generators.

/** Characters a real HTTP header value can carry (latin1 without controls other than tab). */
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0xff }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.constant('\t') },
);
const headerText = (maxLength = 80) => fc.string({ unit: headerChar, maxLength }).map((value) => value.trim());

const specialStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202eevil',
  '😀'.repeat(5),
  'Ω≈ç√∫',
  '%00',
  '../../etc/passwd',
  "'; DROP TABLE accounts; --",
  '__proto__',
  'constructor',
  'NaN',
  'Infinity',
  '-1',
  '1e309',
  'null',
  'true',
  '{}',
  '[]',
);

const unicodeText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: specialStrings },
);

const longString = fc
  .tuple(fc.integer({ min: 101, max: 20_000 }), fc.constantFrom('x', 'é', '😀', '\u0000', ' '))
  .map(([length, unit]) => unit.repeat(length));

function nested(depth: number, leaf: unknown, asArray: boolean): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = asArray ? [value] : { a: value };
  return value;
}
const deepValue = fc
  .tuple(fc.integer({ min: 10, max: 2_000 }), fc.boolean())
  .map(([depth, asArray]) => nested(depth, 1, asArray));

const extremeNumber = fc.constantFrom(
  0,
  -0,
  1,
  -1,
  0.1,
  1e-9,
  1e-10,
  5e-10,
  5e-324,
  999_999_999.999_999_9,
  1e9,
  1e9 + 1,
  -1e9,
  -1e9 - 1,
  2 ** 31,
  2 ** 53,
  -(2 ** 53),
  1e21,
  1.7976931348623157e308,
  -1.7976931348623157e308,
);
const numberish = fc.oneof(
  { weight: 3, arbitrary: extremeNumber },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e3', '0x10', '', ' 5 ', '1,5', '-0') },
);

/** A value of any JSON type, leaning towards the shapes that break handlers. */
const wildValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: numberish },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: unicodeText },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: longString },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.array(numberish, { maxLength: 3 }) },
);

/** An object with the route's field names, each usually a plausible value, sometimes a wild one, sometimes absent. */
function shaped(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([name, good]) =>
    fc.option(
      fc
        .oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: wildValue })
        .map((value) => [name, value] as const),
      { freq: 8 },
    ),
  );
  const extraName = fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype') },
  );
  const extra = fc.option(fc.tuple(extraName, wildValue), { freq: 5 });
  return fc.tuple(fc.tuple(...entries), extra).map(([present, extraField]) => {
    const object: Record<string, unknown> = {};
    for (const entry of present) if (entry) object[entry[0]] = entry[1];
    // defineProperty, so a "__proto__" key becomes an own field of the JSON text rather than a prototype change.
    if (extraField)
      Object.defineProperty(object, extraField[0], {
        value: extraField[1],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return object;
  });
}

const usd = fc.oneof(
  fc.double({ min: 0, max: 1e9, noNaN: true }),
  fc.integer({ min: 0, max: 1000 }),
  fc.constantFrom(0, 0.01, 1e9),
);
const signedUsd = fc.oneof(
  fc.double({ min: -1e9, max: 1e9, noNaN: true }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(1e9, -1e9, 0.000_000_001),
);
const keyName = withUnstorable(
  fc.oneof(
    fc.string({ minLength: 1, maxLength: 100, unit: 'binary' }),
    fc.constantFrom('a', ' ', '\u0000', 'x'.repeat(100), 'k\u0000ey'),
  ),
);
const emailArb = withUnstorable(
  fc.oneof(
    { weight: 3, arbitrary: fc.emailAddress() },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'fuzz-main@example.com',
        'FUZZ-MAIN@EXAMPLE.COM',
        ' fuzz-main@example.com ',
        'a@b',
        'nobody@example.com',
      ),
    },
    { weight: 1, arbitrary: unicodeText },
  ),
);
const passwordArb = withUnstorable(
  fc.oneof(
    { weight: 2, arbitrary: fc.string({ minLength: 8, maxLength: 40, unit: 'binary' }) },
    { weight: 1, arbitrary: fc.constantFrom('correct horse battery staple', 'short', '\u0000'.repeat(8), 'ﬀﬀﬀﬀﬀﬀﬀﬀ') },
  ),
);
const limitsObject = () => shaped({ daily: usd, weekly: usd, monthly: usd, total: usd });
const nullableUsd = fc.oneof(usd, fc.constant(null));

const modalityValue = withUnstorable(
  fc.oneof(
    fc.constantFrom(
      'text',
      'image',
      'audio',
      'video',
      'embedding',
      'text,image',
      'image,,text',
      ' text ',
      'TEXT',
      ',',
      '',
      'text,bogus',
    ),
    unicodeText,
  ),
);

// ---------------------------------------------------------------------------------------------------------------
// Query strings, paths, headers and bodies.

function encodeLoosely(value: string, raw: boolean): string {
  if (raw) return value.replace(/[#\s]/g, '');
  try {
    return encodeURIComponent(value);
  } catch {
    return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '?'));
  }
}

const queryValue = fc.oneof(
  { weight: 3, arbitrary: numberish.map(String) },
  { weight: 2, arbitrary: modalityValue },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%ZZ',
      '%',
      '%E0%A4%A',
      '%00',
      'a%00b',
      '%ED%A0%80',
      '%C0%80',
      '[]',
      '1&limit=2',
      'a=b=c',
    ),
  },
  { weight: 1, arbitrary: longString },
);
const queryPair = fc
  .tuple(
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom(
          'offset',
          'limit',
          'inputModalities',
          'outputModalities',
          'model',
          'apiKeyId',
          'kind',
          'modality',
        ),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom('limit[]', 'offset[0]', '__proto__', 'constructor', '', 'inputModalities[]'),
      },
      { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
    ),
    queryValue,
    fc.boolean(),
    fc.boolean(),
  )
  .map(([key, value, raw, bare]) =>
    bare ? encodeLoosely(key, raw) : `${encodeLoosely(key, raw)}=${encodeLoosely(value, raw)}`,
  );
const queryString = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.array(queryPair, { minLength: 1, maxLength: 5 }).map((pairs) => `?${pairs.join('&')}`) },
  { weight: 1, arbitrary: fc.constantFrom('?', '??', '?&&', '?=', '?offset=1&offset=2&limit=3&limit=4') },
);

const wildcardSegment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('sandbox-echo', 'sandbox-embedding') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'gpt-4o-mini',
      'missing-model',
      'a/b/c',
      'org%2Fmodel',
      'sandbox-echo/',
      'SANDBOX-ECHO',
      '',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('%', '%25', '%E0%A4%A', '%zz', '%00', '..%2F..', '%F0%9F%98%80', 'a%2', '%%'),
  },
  { weight: 2, arbitrary: unicodeText.map((value) => encodeLoosely(value, false)) },
  { weight: 1, arbitrary: fc.integer({ min: 250, max: 400 }).map((length) => 'm'.repeat(length)) },
);

const credentialKinds: CredentialKind[] = [
  'none',
  'main-session-bearer',
  'main-session-cookie',
  'main-key-header',
  'main-key-bearer',
  'main-key-and-bad-bearer',
  'spare-key',
  'other-session',
  'other-key',
  'admin',
  'admin-and-key',
  'garbage-key-header',
  'garbage-bearer',
  'odd-scheme',
  'garbage-cookie',
  'prefixed-garbage',
];

function credentialArb(favoured: readonly CredentialKind[]): fc.Arbitrary<CredentialSpec> {
  const oddScheme = fc.oneof(
    headerText(),
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      'Token abc',
      'bearer  a b',
      'Bearer\tx',
      'Digest x=y',
      'BEARER gwk_',
      'Bearer gws_',
    ),
  );
  return fc.record({
    kind: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...favoured) },
      { weight: 2, arbitrary: fc.constantFrom(...credentialKinds) },
    ),
    pick: fc.nat(),
    garbage: fc.oneof(
      headerText(),
      oddScheme,
      fc.constantFrom('gwk_', 'gws_', `gwk_${'a'.repeat(300)}`, 'x'.repeat(500)),
    ),
  });
}

const extraHeadersArb: fc.Arbitrary<Record<string, string>> = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'x-request-id',
        'cookie',
        'accept',
        'x-forwarded-for',
        'accept-encoding',
        'x-api-key',
        'origin',
        'content-encoding',
        'transfer-encoding-x',
      ),
      fc.oneof(
        headerText(),
        fc.constantFrom('gw_session=', 'gw_session=gws_abc; other=1', 'a'.repeat(200), 'gzip', 'identity', '*/*'),
      ),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => Object.fromEntries(pairs.filter(([, value]) => value !== '')));

const jsonContentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json;',
    ),
  },
);
const anyContentType = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    'text/plain',
    'application/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/octet-stream',
    'application/json; charset=utf-16',
    'application/vnd.api+json',
    '',
    ';',
    '*/*',
    'application/',
  ),
  headerText(40),
);
const brokenJson = fc.oneof(
  fc.constantFrom(
    '{',
    '{"name":',
    '{"name": "x",}',
    "{'name': 'x'}",
    'nul',
    '[1,2',
    '{"a":1}{"b":2}',
    '\ufeff{}',
    '{"__proto__": {"x": 1}}',
    '{"constructor": {"prototype": {"x": 1}}}',
    '',
  ),
  fc.jsonValue().map((value) => JSON.stringify(value).slice(0, -1)),
);

function bodyArb(fields: (() => fc.Arbitrary<Record<string, unknown>>) | undefined): fc.Arbitrary<BodySpec> {
  const json = (value: fc.Arbitrary<unknown>) =>
    fc
      .tuple(value, jsonContentType)
      .map(([payload, contentType]): BodySpec => ({ contentType, payload: JSON.stringify(payload) ?? 'null' }));
  const choices: fc.WeightedArbitrary<BodySpec>[] = [
    { weight: 2, arbitrary: fc.constant({ contentType: undefined, payload: undefined }) },
    { weight: 1, arbitrary: json(fc.jsonValue({ maxDepth: 3 })) },
    { weight: 1, arbitrary: json(wildValue) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.oneof(unicodeText, longString), anyContentType)
        .map(([payload, contentType]) => ({ contentType, payload })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(brokenJson, jsonContentType).map(([payload, contentType]) => ({ contentType, payload })),
    },
  ];
  if (fields) {
    choices.push({ weight: 18, arbitrary: json(fields()) });
    // The route's own fields with U+0000 or a lone surrogate in one string or field name, or a hostile field name in one object.
    choices.push({
      weight: 4,
      arbitrary: json(fc.tuple(fields(), poisonArb).map(([body, poison]) => poisoned(body, poison))),
    });
  }
  return fc.oneof(...choices);
}

const idGarbage = fc.oneof(
  unicodeText,
  fc.constantFrom('', '-', '_', 'a'.repeat(101), 'a'.repeat(400), '..', 'key_'.repeat(30)),
);
/** Key ids: mostly the main account's spare keys (so owner-scoped handlers run), sometimes foreign, unknown or junk. */
const keyIdArb: fc.Arbitrary<IdSpec> = fc.record({
  kind: fc.oneof(
    { weight: 6, arbitrary: fc.constant<IdKind>('spare-key') },
    { weight: 1, arbitrary: fc.constantFrom<IdKind>('main-key', 'other-key', 'well-formed-unknown', 'main-account') },
    { weight: 1, arbitrary: fc.constant<IdKind>('garbage') },
  ),
  pick: fc.nat(),
  garbage: idGarbage,
});
const accountIdArb: fc.Arbitrary<IdSpec> = fc.record({
  kind: fc.oneof(
    { weight: 4, arbitrary: fc.constant<IdKind>('main-account') },
    { weight: 2, arbitrary: fc.constantFrom<IdKind>('other-account', 'well-formed-unknown', 'main-key') },
    { weight: 1, arbitrary: fc.constant<IdKind>('garbage') },
  ),
  pick: fc.nat(),
  garbage: idGarbage,
});

const allMethods = METHODS.filter((method) => method !== 'CONNECT');

function requestArb(routes: readonly RouteDef[], favoured: readonly CredentialKind[]): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...routes).chain((route) =>
    fc.record({
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constant(route.method) },
        { weight: 1, arbitrary: fc.constantFrom(...allMethods) },
      ),
      template: fc.constant(route.template),
      keyId: keyIdArb,
      accountId: accountIdArb,
      wildcard: wildcardSegment,
      query: route.query
        ? queryString
        : fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString }),
      credential: credentialArb(favoured),
      extraHeaders: extraHeadersArb,
      body: bodyArb(route.body),
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// The check run for every generated request.

interface Envelope {
  errors: unknown;
  status: unknown;
  success: unknown;
  path: unknown;
  timestamp: unknown;
  type?: unknown;
  error: { message?: unknown; type?: unknown; code?: unknown; details?: { reason?: unknown }[] };
}

function requestPathOf(options: InjectOptions): string {
  const url = typeof options.url === 'string' ? options.url : '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

let lastDigest: Digest;
const stats = { total: 0, ok: 0, rejected: 0 };
/** Answers per route and status; printed with FUZZ_STATS=1 to see which paths the generators reach. */
const histogram = new Map<string, number>();

function withTimeout(response: Promise<LightMyRequestResponse>, what: string): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${requestTimeoutMs} ms: ${what}`)), requestTimeoutMs);
  });
  return Promise.race([response, timeout]).finally(() => clearTimeout(timer));
}

function describeRequest(options: InjectOptions): string {
  const payload =
    typeof options.payload === 'string' && options.payload.length > 300
      ? `${options.payload.slice(0, 300)}…`
      : options.payload;
  const url =
    typeof options.url === 'string' && options.url.length > 300 ? `${options.url.slice(0, 300)}…` : options.url;
  return JSON.stringify({ method: options.method, url, headers: options.headers, payload });
}

async function check(request: FuzzRequest): Promise<void> {
  const options = resolve(request);
  const what = describeRequest(options);
  const response = await withTimeout(testGateway.request(options), what);
  const status = response.statusCode;
  stats.total++;
  const bucket = `${request.method} ${request.template} ${status}`;
  histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);

  // (1) 2xx or 4xx only.
  const acceptable = (status >= 200 && status < 300) || (status >= 400 && status < 500);
  expect(acceptable, `status ${status} for ${what}\nbody: ${response.body.slice(0, 500)}`).toBe(true);

  if (status >= 400) {
    stats.rejected++;
    // (2) The error envelope, exactly (HEAD answers carry no body).
    if (options.method !== 'HEAD') {
      let body: unknown;
      expect(
        () => (body = JSON.parse(response.body)),
        `non-JSON ${status} body for ${what}: ${response.body.slice(0, 300)}`,
      ).not.toThrow();
      expect(
        typeof body === 'object' && body !== null && !Array.isArray(body),
        `${status} body is not an object for ${what}`,
      ).toBe(true);
      const envelope = body as Envelope;
      // Beside the spec's fields, the error in the shape the path's surface's SDKs parse (error-envelope.ts).
      const surface = surfaceOf(requestPathOf(options));
      const sdkKeys = surface === 'beta' ? ['type'] : [];
      expect(Object.keys(envelope).sort(), `envelope keys for ${what}`).toEqual(
        ['error', 'errors', 'path', 'status', 'success', 'timestamp', ...sdkKeys].sort(),
      );
      if (surface === 'beta') expect(envelope.type, `beta's top-level type for ${what}`).toBe('error');
      expect(
        Array.isArray(envelope.errors) && envelope.errors.length > 0,
        `errors must be a non-empty array for ${what}`,
      ).toBe(true);
      expect(envelope.error.message, `error.message joins the messages for ${what}`).toBe(
        (envelope.errors as string[]).join('; '),
      );
      if (surface === 'gamma') {
        expect(envelope.error.code, `gamma's error.code is the status for ${what}`).toBe(status);
        expect(envelope.error.details?.[0]?.reason, `gamma's ErrorInfo reason for ${what}`).toBe(
          response.headers['x-gateway-error-code'],
        );
      } else expect(envelope.error.code, `error.code for ${what}`).toBe(response.headers['x-gateway-error-code']);
      for (const message of envelope.errors as unknown[])
        expect(typeof message, `error messages are strings for ${what}`).toBe('string');
      expect(envelope.status, `envelope status for ${what}`).toBe(status);
      expect(envelope.success, `envelope success for ${what}`).toBe(false);
      expect(typeof envelope.path, `envelope path for ${what}`).toBe('string');
      expect(
        typeof envelope.timestamp === 'number' && Number.isFinite(envelope.timestamp),
        `envelope timestamp for ${what}`,
      ).toBe(true);
      expect(String(response.headers['content-type']), `envelope content-type for ${what}`).toMatch(
        /^application\/json/,
      );
    }
    // (3) Nothing stored changed.
    const after = await digest();
    expect(
      after,
      `rows changed by a rejected request (${status}) ${what}\nbody: ${response.body.slice(0, 300)}`,
    ).toEqual(lastDigest);
  } else {
    stats.ok++;
    await repairFixtures();
    lastDigest = await digest();
  }
}

function runProperty(arbitrary: fc.Arbitrary<FuzzRequest>, numRuns: number): Promise<void> {
  return checkWithinTime(
    fc.asyncProperty(arbitrary, async (request) => {
      lastDigest = await digest();
      await check(request);
    }),
    numRuns,
  );
}

/**
 * Runs a property `numRuns` times, stopped by the time limit only as a guard against a hang: a failure fails,
 * and so does a run cut short before half its cases were checked (the claim would not have been tested).
 */
async function checkWithinTime<T>(property: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  const runs = Math.round(numRuns * runScale);
  const details = await fc.check(property, { numRuns: runs, seed, interruptAfterTimeLimit: timeLimitMs });
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
  expect(details.numRuns, `cases checked within ${timeLimitMs} ms`).toBeGreaterThanOrEqual(Math.ceil(runs / 2));
}

// ---------------------------------------------------------------------------------------------------------------
// Routes.

const authRoutes: RouteDef[] = [
  { method: 'POST', template: '/api/v1/auth/signup', body: () => shaped({ email: emailArb, password: passwordArb }) },
  {
    method: 'POST',
    template: '/api/v1/auth/login',
    // The right email and password now and then, so a login also succeeds (and opens a session row).
    body: () =>
      fc.oneof(
        { weight: 3, arbitrary: shaped({ email: emailArb, password: passwordArb }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            { email: 'fuzz-main@example.com', password: 'correct horse battery staple' },
            { email: ' FUZZ-MAIN@example.com', password: 'correct horse battery staple' },
            { email: 'fuzz-other@example.com', password: 'another correct horse' },
            { email: 'fuzz-main@example.com', password: 'another correct horse' },
          ),
        },
      ),
  },
  { method: 'POST', template: '/api/v1/auth/logout', body: () => shaped({}) },
];

const accountRoutes: RouteDef[] = [
  { method: 'GET', template: '/api/v1/account' },
  { method: 'GET', template: '/api/v1/api-keys' },
  { method: 'POST', template: '/api/v1/api-keys', body: () => shaped({ name: keyName, limits: limitsObject() }) },
  { method: 'GET', template: '/api/v1/api-keys/:keyId/reveal' },
  {
    method: 'PATCH',
    template: '/api/v1/api-keys/:keyId/usage-limit',
    body: () => shaped({ daily: nullableUsd, weekly: nullableUsd, monthly: nullableUsd, total: nullableUsd }),
  },
  {
    method: 'PATCH',
    template: '/api/v1/api-keys/:keyId',
    body: () => shaped({ name: keyName, isActive: fc.boolean() }),
  },
  { method: 'DELETE', template: '/api/v1/api-keys/:keyId' },
];

const compatAndModelRoutes: RouteDef[] = [
  { method: 'GET', template: '/api/compat/v1/usage', query: true },
  { method: 'GET', template: '/api/compat/v1/balance' },
  { method: 'GET', template: '/api/compat/v1/api-key' },
  { method: 'GET', template: '/api/v1/ai/models', query: true },
  { method: 'GET', template: '/api/v1/ai/models/*', query: true },
];

const adminRoutes: RouteDef[] = [
  {
    method: 'POST',
    template: '/api/admin/v1/accounts',
    // A password costs an scrypt hash (tens of milliseconds), so it is sent less often than the other fields.
    body: () =>
      fc
        .tuple(shaped({ email: emailArb, credits: usd }), fc.option(passwordArb, { freq: 4 }))
        .map(([body, password]) => (password === null ? body : { ...body, password })),
  },
  { method: 'GET', template: '/api/admin/v1/accounts/:accountId' },
  {
    method: 'POST',
    template: '/api/admin/v1/accounts/:accountId/credits',
    body: () => shaped({ amount: signedUsd, note: withUnstorable(fc.oneof(unicodeText, longString)) }),
  },
  { method: 'GET', template: '/api/admin/v1/accounts/:accountId/generations', query: true },
  { method: 'GET', template: '/api/admin/v1/accounts/:accountId/generations/:generationId' },
  {
    method: 'POST',
    template: '/api/admin/v1/accounts/:accountId/api-keys',
    body: () => shaped({ name: keyName, limits: limitsObject() }),
  },
  {
    method: 'PATCH',
    template: '/api/admin/v1/api-keys/:keyId',
    body: () => shaped({ name: keyName, isActive: fc.boolean() }),
  },
  { method: 'DELETE', template: '/api/admin/v1/api-keys/:keyId' },
];

/** Usage, media and every route that looks a job up by the id in its path. */
const lookupRoutes: RouteDef[] = [
  { method: 'GET', template: '/api/v1/usage', query: true },
  { method: 'GET', template: '/api/v1/usage/:generationId' },
  { method: 'GET', template: '/api/v1/media', query: true },
  { method: 'GET', template: '/api/v1/image/generations/async/:generationId' },
  { method: 'GET', template: '/api/v1/video/tasks/:generationId' },
  { method: 'POST', template: '/api/v1/video/tasks/:generationId/cancel' },
  { method: 'GET', template: '/api/v1/audio/generations/:generationId' },
  { method: 'GET', template: '/api/alpha/v1/videos/:generationId' },
  { method: 'GET', template: '/api/alpha/v1/videos/:generationId/content', query: true },
];

const probeAndUnknownRoutes: RouteDef[] = [
  { method: 'HEAD', template: '/api/alpha' },
  { method: 'HEAD', template: '/api/beta' },
  { method: 'HEAD', template: '/api/gamma' },
  { method: 'GET', template: '/api/alpha' },
  { method: 'POST', template: '/api/v1/*' },
  { method: 'GET', template: '/api/compat/v1/*' },
  { method: 'PUT', template: '/api/admin/v1/*' },
  { method: 'GET', template: '/*', query: true },
  { method: 'DELETE', template: '/api/v1/api-keys/:keyId/reveal/*' },
  { method: 'GET', template: '/api/alpha/v1/chat/completions' },
  { method: 'OPTIONS', template: '/api/v1/account' },
  { method: 'PUT', template: '/api/v1/account' },
  { method: 'GET', template: '//api//v1//account' },
  { method: 'GET', template: '/api/v1/account/' },
  { method: 'GET', template: '/API/V1/ACCOUNT' },
];

// ---------------------------------------------------------------------------------------------------------------

describe('route fuzzing: 2xx/4xx only, envelope on 4xx, no row change on 4xx', () => {
  beforeAll(async () => {
    testGateway = await startTestGateway();
    services = testGateway.gateway.core.services;
    main = await signupIdentity('fuzz-main@example.com', 'correct horse battery staple');
    other = await signupIdentity('fuzz-other@example.com', 'another correct horse');
    await testGateway.createFundedKey({ credits: 3 });
    await repairFixtures();
    lastDigest = await digest();
  });
  afterAll(async () => {
    if (process.env.FUZZ_STATS) {
      const lines = [...histogram.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([bucket, count]) => `${String(count).padStart(5)}  ${bucket}`);
      console.log(
        `fuzz: ${stats.total} requests, ${stats.ok} accepted, ${stats.rejected} rejected\n${lines.join('\n')}`,
      );
    }
    await testGateway?.close();
  });

  it('auth: signup, login, logout', async () => {
    await runProperty(
      requestArb(authRoutes, [
        'none',
        'main-session-bearer',
        'main-session-cookie',
        'other-session',
        'main-key-header',
      ]),
      60,
    );
  });

  it('account: account, api-keys CRUD, reveal, usage-limit', async () => {
    await runProperty(
      requestArb(accountRoutes, [
        'main-session-bearer',
        'main-session-cookie',
        'main-key-header',
        'main-key-bearer',
        'other-session',
      ]),
      200,
    );
  });

  it('compat usage/balance/api-key and native models', async () => {
    await runProperty(
      requestArb(compatAndModelRoutes, ['main-key-header', 'main-key-bearer', 'main-session-bearer', 'spare-key']),
      150,
    );
  });

  it('admin: accounts, credits, api-keys', async () => {
    await runProperty(requestArb(adminRoutes, ['admin', 'admin', 'admin-and-key']), 150);
  });

  it('admin: runs of credit adjustments on one account stay 2xx/4xx (balance bounds)', async () => {
    // Mostly large amounts in one direction per run, so a run can push the balance past what storage holds.
    const amount = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(1e9, 999_999_999.999_999, 7.5e8) },
      { weight: 1, arbitrary: signedUsd },
      { weight: 1, arbitrary: wildValue },
    );
    const step = fc.tuple(
      amount,
      fc.option(fc.oneof({ weight: 4, arbitrary: unicodeText }, { weight: 1, arbitrary: longString }), { freq: 2 }),
    );
    const run = fc.tuple(fc.constantFrom(1, -1), fc.array(step, { minLength: 8, maxLength: 16 }));
    await checkWithinTime(
      fc.asyncProperty(run, async ([direction, steps]) => {
        scratchAccountId = (await services.accounts.createAccount({ email: `scratch-${++scratchCounter}@example.com` }))
          .id;
        lastDigest = await digest();
        for (const [value, note] of steps) {
          const signed = typeof value === 'number' ? value * direction : value;
          await check({
            method: 'POST',
            template: '/api/admin/v1/accounts/:accountId/credits',
            keyId: { kind: 'main-key', pick: 0, garbage: '' },
            accountId: { kind: 'scratch-account', pick: 0, garbage: '' },
            wildcard: '',
            query: '',
            credential: { kind: 'admin', pick: 0, garbage: '' },
            extraHeaders: {},
            body: {
              contentType: 'application/json',
              payload: JSON.stringify(note === null ? { amount: signed } : { amount: signed, note }),
            },
          });
        }
      }),
      15,
    );
  });

  it('usage, media and job lookups by id', async () => {
    await runProperty(
      requestArb(lookupRoutes, ['main-key-header', 'main-key-bearer', 'main-session-bearer', 'spare-key']),
      150,
    );
  });

  it('HEAD probes, unknown paths and wrong methods', async () => {
    await runProperty(
      requestArb(probeAndUnknownRoutes, ['none', 'main-key-header', 'main-session-bearer', 'admin']),
      120,
    );
  });

  it('reached the handlers behind authentication', () => {
    // A sanity check on the generators: a good share of requests got through to a 2xx answer.
    expect(stats.ok).toBeGreaterThan(stats.total / 10);
  });
});
