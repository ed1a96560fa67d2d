import { describe, expect, it } from 'vitest';
import { relayedContentType } from '../../src/providers/shared/upstream-http.ts';

describe("an upstream answer's content type as relayed", () => {
  it('keeps the media types providers answer in, and a UTF-8 charset', () => {
    expect(relayedContentType('application/json')).toBe('application/json');
    expect(relayedContentType('Application/JSON; charset=UTF-8')).toBe('application/json; charset=utf-8');
    expect(relayedContentType('text/event-stream;charset="utf-8"')).toBe('text/event-stream; charset=utf-8');
    expect(relayedContentType(['application/problem+json', 'text/html'])).toBe('application/problem+json');
    expect(relayedContentType('application/x-ndjson')).toBe('application/x-ndjson');
    expect(relayedContentType('text/plain; charset=iso-8859-1')).toBe('text/plain');
  });

  it('drops every other parameter, where an upstream could quote back what it was sent', () => {
    expect(relayedContentType('application/json; echoed="Bearer sk-live-0123"; charset=utf-8')).toBe(
      'application/json; charset=utf-8',
    );
    expect(relayedContentType('text/event-stream; boundary=sk-live-0123')).toBe('text/event-stream');
  });

  it('relays no other media type and nothing that is not one', () => {
    expect(relayedContentType('text/html; charset=utf-8')).toBeUndefined();
    expect(relayedContentType('sk-live-0123/secret')).toBeUndefined();
    expect(relayedContentType('Bearer sk-live-0123')).toBeUndefined();
    expect(relayedContentType('')).toBeUndefined();
    expect(relayedContentType(undefined)).toBeUndefined();
  });
});
