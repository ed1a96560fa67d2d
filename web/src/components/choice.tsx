interface ChoiceProps<T extends string | number> {
  label: string;
  value: T;
  options: ReadonlyArray<{ value: T; label: string }>;
  onChange: (value: T) => void;
  /** Label and list on one line (page headings), rather than the label above. */
  inline?: boolean;
}

/** A labelled drop-down list of fixed choices. */
export function Choice<T extends string | number>({ label, value, options, onChange, inline = false }: ChoiceProps<T>) {
  return (
    <label class={inline ? 'inline' : undefined}>
      {label}
      <select
        value={String(value)}
        onChange={(event) => {
          const chosen = options.find((option) => String(option.value) === event.currentTarget.value);
          if (chosen) onChange(chosen.value);
        }}
      >
        {options.map((option) => (
          <option key={String(option.value)} value={String(option.value)}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}
