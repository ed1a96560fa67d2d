interface PagerProps {
  offset: number;
  limit: number;
  total: number;
  onOffset: (offset: number) => void;
  label: string;
}

/** Previous/next over an offset/limit listing, saying which records are shown. */
export function Pager({ offset, limit, total, onOffset, label }: PagerProps) {
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span aria-live="polite">
        {first}–{last} of {total}
      </span>
      <button type="button" disabled={offset + limit >= total} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
