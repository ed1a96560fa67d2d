import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Dialog } from './dialog.tsx';
import { ErrorText, messageOf } from './feedback.tsx';

interface FormDialogProps {
  title: string;
  submitLabel: string;
  onClose: () => void;
  /** Runs on submit; what it throws is shown in the dialog, which stays open. */
  action: () => Promise<void>;
  children: ComponentChildren;
}

/** A dialog around one form that calls the API once, with its submit and cancel buttons and its error. */
export function FormDialog({ title, submitLabel, onClose, action, children }: FormDialogProps) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <form onSubmit={submit} class="stack">
        {children}
        <ErrorText message={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {submitLabel}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
