import type { ProviderAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { anthropicCarries, streamAnthropicMessages } from './anthropic-messages.ts';
import { anthropicRelayMeter, relayAnthropic } from './anthropic-relay.ts';

export function createAnthropicAdapter(http: UpstreamHttp): ProviderAdapter {
  return {
    protocol: 'anthropic',
    text: {
      streamChat: (request, options) => streamAnthropicMessages(http, request, options),
      carries: anthropicCarries,
      relay: (request, options) => relayAnthropic(http, request, options),
      relayMeter: anthropicRelayMeter,
    },
  };
}
