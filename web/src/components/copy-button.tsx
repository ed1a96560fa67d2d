import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard and says so; where the clipboard is refused, the text stays selectable beside it. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setStatus('Copied');
    } catch {
      setStatus('Copying was refused: select the text and copy it');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span class="muted" role="status" aria-live="polite">
        {status}
      </span>
    </span>
  );
}
