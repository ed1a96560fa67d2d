import { describe, expect, it } from 'vitest';
import { recordableRequest } from '../../src/domain/audit-entry.ts';

/** What the audit log keeps of a request body: everything but secrets, however the client spells their names. */
describe('recordableRequest', () => {
  it('leaves out secrets at any depth, whatever their spelling, and keeps ids that name them', () => {
    const body = {
      email: 'a@example.com',
      password: 'p1',
      newPassword: 'p2',
      api_key: 'sk-1',
      apiKey: 'sk-2',
      'refresh-token': 't1',
      Authorization: 'Bearer x',
      cookie: 'gw_session=1',
      keyId: 'key_1',
      limits: { daily: 1, nested: [{ clientSecret: 's', name: 'kept' }] },
    };
    expect(recordableRequest(body)).toEqual({
      email: 'a@example.com',
      keyId: 'key_1',
      limits: { daily: 1, nested: [{ name: 'kept' }] },
    });
  });

  it('keeps nothing of a body that is only secrets', () => {
    expect(recordableRequest({ password: 'p' })).toBeNull();
  });
});
