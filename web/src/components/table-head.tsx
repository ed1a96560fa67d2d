import type { ComponentChildren } from 'preact';

/** A table's column headers, each announced as the header of its column. */
export function TableHead({ columns }: { columns: ComponentChildren[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column, index) => (
          <th key={index} scope="col">
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}
