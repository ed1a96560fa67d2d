import { describe, expect, it } from 'vitest';
import { LimitsPatch, NewKeyBody } from '../../src/http/schemas.ts';
import { Credentials } from '../../src/surfaces/account/auth-routes.ts';
import { bodyErrors } from '../support/body-check.ts';

/**
 * The account routes' bodies are checked by their schemas strictly, and a refusal names the field as the client
 * wrote it. The envelope a refusal travels in is claimed over HTTP in error-envelope.test.ts.
 */
describe('account request bodies', () => {
  it('names the field whose type is wrong', () => {
    expect(bodyErrors(NewKeyBody, { name: 123 })).toEqual(['body.name must be string']);
  });

  it('names a missing required field', () => {
    expect(bodyErrors(Credentials, { email: 'someone@example.com' })).toEqual([
      "body must have required property 'password'",
    ]);
  });

  it('names a field with an invalid format', () => {
    expect(bodyErrors(Credentials, { email: 'not-an-email', password: 'long enough password' })).toEqual([
      'body.email must match format "email"',
    ]);
  });

  it('names a nested field that is out of range', () => {
    expect(bodyErrors(NewKeyBody, { name: 'capped', limits: { daily: -1 } })).toEqual([
      'body.limits.daily must be >= 0',
    ]);
  });

  it('does not coerce a number sent as a string in a body', () => {
    expect(bodyErrors(LimitsPatch, { daily: '5' })).toEqual(['body.daily must be of type number, null']);
    expect(bodyErrors(LimitsPatch, { daily: 5 })).toEqual([]);
  });

  it('names the required field of an empty JSON object', () => {
    expect(bodyErrors(NewKeyBody, {})).toEqual(["body must have required property 'name'"]);
  });
});
