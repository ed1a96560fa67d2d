import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** A Close button below the content, for dialogs that only show something. */
  closeButton?: boolean;
}

/**
 * A modal dialog on the native <dialog>: the browser keeps focus inside it and closes it on Escape. Focus
 * goes to the first field (or the element marked `autofocus`) and, when it closes, back where it was.
 */
export function Dialog({ title, onClose, children, closeButton = false }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.showModal();
    // The element marked autofocus (a dialog's safe choice) wins over the first field in document order.
    const first =
      dialog.querySelector<HTMLElement>('[autofocus]') ??
      dialog.querySelector<HTMLElement>('input, select, textarea, button:not(.dialog-close)');
    first?.focus();
    return () => {
      if (dialog.open) dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <div class="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" class="dialog-close" aria-label="Close dialog" onClick={onClose}>
          ×
        </button>
      </div>
      {children}
      {closeButton ? (
        <div class="actions">
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      ) : null}
    </dialog>
  );
}
