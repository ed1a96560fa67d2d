import { afterAll, beforeAll } from 'vitest';
import { type FamilyGateway, startFamilyGateway } from './test-gateway.ts';

export interface FamilyGatewayOptions {
  /**
   * gateway.yaml lines after the family's models (`startFamilyGateway`'s `extraModels`): further catalog entries,
   * or a section of its own (`server: …`).
   */
  readonly extraConfig?: string[];
  /** The credits (USD) of one key made for the block's tests to share; without them no key is made. */
  readonly credits?: number;
  /** Whether the gateway listens on loopback, for clients that need an address (the official SDKs, fetch). */
  readonly listen?: boolean;
}

export interface UsedFamilyGateway {
  /** The gateway in front of the fakes of every upstream family. */
  readonly gateway: FamilyGateway;
  /** The shared key, funded with `credits`. */
  readonly key: string;
  /** http://127.0.0.1:<port>, where the gateway listens with `listen`. */
  readonly address: string;
}

/**
 * A family gateway (`startFamilyGateway`) for one describe block: started before its tests, with a funded key
 * and a loopback address if asked, and closed after them. Its properties are read inside the tests, once the
 * gateway is up; reading one the block did not ask for throws rather than hand a test an empty key or address.
 */
export function useFamilyGateway({
  extraConfig,
  credits,
  listen = false,
}: FamilyGatewayOptions = {}): UsedFamilyGateway {
  let gateway: FamilyGateway | undefined;
  let key: string | undefined;
  let address: string | undefined;

  beforeAll(async () => {
    gateway = await startFamilyGateway(extraConfig);
    if (credits !== undefined) ({ key } = await gateway.createFundedKey({ credits }));
    if (listen) address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  return {
    get gateway() {
      if (!gateway) throw new Error('the family gateway is read inside tests, once started');
      return gateway;
    },
    get key() {
      if (key === undefined) throw new Error('no shared key: useFamilyGateway was given no credits');
      return key;
    },
    get address() {
      if (address === undefined) throw new Error('no address: useFamilyGateway was not asked to listen');
      return address;
    },
  };
}
