import type { RelayOperation, ServedModel } from '../provider-adapter.ts';

/** Where each relayed protocol's answers and stream events name their model. */
const modelFields: Readonly<Record<RelayOperation, ServedModel['fields']>> = {
  'chat-completions': [['model']],
  // The whole Response, and the Response inside response.created, response.completed and the like.
  responses: [['model'], ['response', 'model']],
  // The whole Message, and the Message of message_start.
  messages: [['model'], ['message', 'model']],
  'generate-content': [['modelVersion']],
  'stream-generate-content-sse': [['modelVersion']],
  'stream-generate-content-json': [['modelVersion']],
};

/** The catalog model `modelId` as the answers of `operation` name it. */
export function servedAs(operation: RelayOperation, modelId: string): ServedModel {
  return { modelId, fields: modelFields[operation] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Sets the model an answer or a stream event names (a field that holds a string, where the protocol puts it)
 * to the served one; whether any field changed.
 */
export function nameServedModel(value: unknown, { modelId, fields }: ServedModel): boolean {
  let changed = false;
  for (const path of fields) {
    let holder: unknown = value;
    for (let step = 0; step < path.length - 1; step++) holder = isRecord(holder) ? holder[path[step]!] : undefined;
    const last = path[path.length - 1]!;
    if (isRecord(holder) && typeof holder[last] === 'string' && holder[last] !== modelId) {
      holder[last] = modelId;
      changed = true;
    }
  }
  return changed;
}
