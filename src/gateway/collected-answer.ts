import type { ChatStreamEvent, FinishReason, TokenLogprob, ToolCall } from '../domain/chat.ts';

/**
 * One completion of an answer: its text and its tool calls, in the order the model made them, arguments whole,
 * and the log probabilities of its tokens when they were asked for.
 */
export interface CollectedChoice {
  text: string;
  toolCalls: ToolCall[];
  logprobs?: TokenLogprob[];
}

/** The whole answer of a run, for surfaces that reply with one JSON body. */
export interface CollectedAnswer extends CollectedChoice {
  finish: Extract<ChatStreamEvent, { type: 'finish' }> | undefined;
  /** The completions after the first, in order, when several were asked for. */
  alternatives: Array<CollectedChoice & { finishReason: FinishReason | undefined }>;
}

interface ChoiceSoFar {
  text: string;
  calls: Map<number, ToolCall>;
  logprobs?: TokenLogprob[];
  finishReason?: FinishReason;
}

function collected(event: ChatStreamEvent, choice: ChoiceSoFar): void {
  if (event.type === 'text-delta') choice.text += event.text;
  else if (event.type === 'tool-call-start')
    choice.calls.set(event.index, { id: event.id, name: event.name, arguments: '' });
  else if (event.type === 'tool-call-delta') {
    const call = choice.calls.get(event.index);
    if (call) call.arguments += event.arguments;
  } else if (event.type === 'logprobs') {
    choice.logprobs ??= [];
    for (const token of event.tokens) choice.logprobs.push(token);
  }
}

export async function collectAnswer(events: AsyncIterable<ChatStreamEvent>): Promise<CollectedAnswer> {
  const choices: ChoiceSoFar[] = [];
  const choiceOf = (index: number) => {
    for (let next = choices.length; next <= index; next++) choices.push({ text: '', calls: new Map() });
    return choices[index]!;
  };
  let finish: CollectedAnswer['finish'];
  for await (const event of events) {
    if (event.type === 'finish') finish = event;
    else if (event.type === 'choice-finish') choiceOf(event.choice).finishReason = event.finishReason;
    else collected(event, choiceOf(event.choice ?? 0));
  }
  const [first, ...rest] = choices.map((choice) => ({
    text: choice.text,
    toolCalls: [...choice.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
    ...(choice.logprobs ? { logprobs: choice.logprobs } : {}),
    finishReason: choice.finishReason,
  }));
  return {
    text: first?.text ?? '',
    toolCalls: first?.toolCalls ?? [],
    ...(first?.logprobs ? { logprobs: first.logprobs } : {}),
    finish,
    alternatives: rest,
  };
}
