/**
 * Gemini 3 and later sign the reasoning behind a turn of function calls (`thoughtSignature` on its first
 * functionCall part) and refuse a conversation that replays the turn without it (400). Other protocols have no
 * place for it, but every one hands a tool call's id back: the signature travels inside the id the client is
 * given, comes out of it when the conversation returns to Gemini, and is left out of the id any other protocol
 * is sent.
 */

/** Between a call's own id and its signature; neither the gateway's ids nor base64url make it by chance. */
const separator = '__ts__';
/** A signature larger than this is not carried in an id (Gemini's are a few kilobytes). */
const maxSignatureCharacters = 32_768;
const standardBase64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The id a client is given for a call: its own, with the signature in base64url (the characters every
 * protocol's ids allow, Anthropic's `^[a-zA-Z0-9_-]+$` included). A signature that is not standard base64 is
 * not carried.
 */
export function signedCallId(id: string, signature: string | undefined): string {
  if (signature === undefined || signature.length > maxSignatureCharacters || !standardBase64.test(signature))
    return id;
  return `${id}${separator}${signature.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')}`;
}

/**
 * A call's id as another protocol is sent it: without the signature, which only Gemini reads, and which would
 * make the id longer than OpenAI takes (40 characters for a chat tool call, 64 for a Responses call).
 */
export function plainCallId(id: string): string {
  const at = id.indexOf(separator);
  return at < 0 ? id : id.slice(0, at);
}

/** A call's id as the gateway gave it out, read back into Gemini's id and signature. */
export function callOfId(id: string): { id: string; signature?: string } {
  const at = id.indexOf(separator);
  if (at < 0) return { id };
  const carried = id.slice(at + separator.length);
  const base64 = carried.replaceAll('-', '+').replaceAll('_', '/');
  return { id: id.slice(0, at), signature: base64.padEnd(Math.ceil(base64.length / 4) * 4, '=') };
}
