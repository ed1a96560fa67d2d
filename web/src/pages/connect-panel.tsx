import { useId, useState } from 'preact/hooks';
import { Choice } from '../components/choice.tsx';
import { CopyButton } from '../components/copy-button.tsx';

/** The model every example calls: a sandbox model answers offline and costs next to nothing. */
const exampleModel = 'sandbox-echo';
/** Shown in the examples until a key is created on this page (the raw key is never kept after that). */
const keyPlaceholder = '$GATEWAY_KEY';

export interface SurfaceBase {
  surface: string;
  /** What speaks it: the SDK to point at the base URL. */
  client: string;
  path: string;
}

/** Each surface's base URL, as its own SDK takes it. */
export const surfaceBases: readonly SurfaceBase[] = [
  { surface: 'OpenAI-style (alpha)', client: 'openai SDK, baseURL', path: '/api/alpha/v1' },
  { surface: 'Anthropic-style (beta)', client: '@anthropic-ai/sdk, baseURL', path: '/api/beta' },
  { surface: 'Gemini-style (gamma)', client: '@google/genai, httpOptions.baseUrl', path: '/api/gamma' },
  { surface: 'Native', client: 'HTTP', path: '/api/v1' },
];

type ExampleName = 'curl' | 'openai' | 'anthropic' | 'genai';

const exampleChoices: ReadonlyArray<{ value: ExampleName; label: string }> = [
  { value: 'curl', label: 'curl' },
  { value: 'openai', label: 'openai SDK' },
  { value: 'anthropic', label: '@anthropic-ai/sdk' },
  { value: 'genai', label: '@google/genai' },
];

/** A first call in each client, on this gateway's origin, with the key given (or a placeholder). */
export function exampleCall(name: ExampleName, origin: string, key: string): string {
  const quotedKey = key === keyPlaceholder ? 'process.env.GATEWAY_KEY' : `'${key}'`;
  switch (name) {
    case 'curl':
      return [
        `curl -s ${origin}/api/alpha/v1/chat/completions \\`,
        `  -H "authorization: Bearer ${key}" -H 'content-type: application/json' \\`,
        `  -d '{"model": "${exampleModel}", "messages": [{"role": "user", "content": "Hello"}]}'`,
      ].join('\n');
    case 'openai':
      return [
        `import OpenAI from 'openai';`,
        '',
        `const client = new OpenAI({ apiKey: ${quotedKey}, baseURL: '${origin}/api/alpha/v1' });`,
        'const answer = await client.chat.completions.create({',
        `  model: '${exampleModel}',`,
        `  messages: [{ role: 'user', content: 'Hello' }],`,
        '});',
        'console.log(answer.choices[0].message.content);',
      ].join('\n');
    case 'anthropic':
      return [
        `import Anthropic from '@anthropic-ai/sdk';`,
        '',
        `const client = new Anthropic({ apiKey: ${quotedKey}, baseURL: '${origin}/api/beta' });`,
        'const message = await client.messages.create({',
        `  model: '${exampleModel}',`,
        '  max_tokens: 256,',
        `  messages: [{ role: 'user', content: 'Hello' }],`,
        '});',
        'console.log(message.content);',
      ].join('\n');
    case 'genai':
      return [
        `import { GoogleGenAI } from '@google/genai';`,
        '',
        `const client = new GoogleGenAI({ apiKey: ${quotedKey}, httpOptions: { baseUrl: '${origin}/api/gamma' } });`,
        `const answer = await client.models.generateContent({ model: '${exampleModel}', contents: 'Hello' });`,
        'console.log(answer.text);',
      ].join('\n');
  }
}

/**
 * Where to point a client: each surface's base URL on this origin and a first call in curl and each vendor
 * SDK. With the key just created on this page the examples carry it; otherwise a placeholder.
 */
export function ConnectPanel({ createdKey }: { createdKey?: string }) {
  const [example, setExample] = useState<ExampleName>('curl');
  const titleId = useId();
  const origin = location.origin;
  const code = exampleCall(example, origin, createdKey ?? keyPlaceholder);
  return (
    <section class="card connect" aria-labelledby={titleId}>
      <div class="card-head">
        <h2 id={titleId}>Connect</h2>
        <Choice inline label="Example" value={example} options={exampleChoices} onChange={setExample} />
      </div>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Base URL of each surface</caption>
          <thead>
            <tr>
              <th scope="col">Surface</th>
              <th scope="col">Base URL</th>
              <th scope="col">Set it as</th>
            </tr>
          </thead>
          <tbody>
            {surfaceBases.map((base) => (
              <tr key={base.path}>
                <th scope="row">{base.surface}</th>
                <td>
                  <code>{`${origin}${base.path}`}</code>
                </td>
                <td>{base.client}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">
        {createdKey
          ? 'The example carries the key you just created.'
          : `Create a key to fill it in, or set ${keyPlaceholder.slice(1)} in your shell.`}
      </p>
      <pre class="code" data-testid="connect-example">
        {code}
      </pre>
      <CopyButton text={code} label="Copy example" />
    </section>
  );
}
