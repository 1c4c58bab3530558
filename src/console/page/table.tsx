// The console's tables: a caption for screen readers, a header row, one row a record, and a line in place of
// the rows when there are none. On a narrow screen styles.css lays each row out as a card, its cells named by
// their data-label.
import type { JSX } from "preact";

export function Table<Row>({
  caption,
  columns,
  rows,
  row,
  empty = null,
}: {
  caption: string;
  columns: string[];
  rows: Row[];
  row: (row: Row) => JSX.Element;
  /** Said when there are no rows; null while saying it would be wrong (a read under way, a feature turned off). */
  empty?: string | null;
}) {
  return (
    <>
      <div class="table">
        <table>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column} scope="col">
                  {column}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{rows.map(row)}</tbody>
        </table>
      </div>
      {rows.length === 0 && empty !== null && <p class="muted">{empty}</p>}
    </>
  );
}
