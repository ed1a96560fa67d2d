/** The JSON of each `data:` line of an event stream, `[DONE]` left out. */
export const dataLines = (body: string) =>
  body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);

/** The text of a beta (messages) answer: its text blocks, or its text deltas when streamed. */
export const betaText = (body: string, stream: boolean): string =>
  stream
    ? dataLines(body)
        .map((event) => (event.type === 'content_block_delta' ? ((event.delta as { text?: string }).text ?? '') : ''))
        .join('')
    : (JSON.parse(body) as { content: Array<{ text: string }> }).content.map((block) => block.text).join('');
