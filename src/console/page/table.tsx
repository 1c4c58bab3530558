// The console's tables: a caption for screen readers, a header row, one row a record, and a line in place of
// the rows when there are none. On a narrow screen styles.css lays each row out as a card, its cells named by
// their data-label.
import type { JSX } from "preact";

/** A table's fixed words: what it holds, its columns' headers, and what it says when it holds nothing. */
export interface TableWords {
  caption: string;
  columns: string[];
  empty?: string;
}

export function Table<Row>({
  caption,
  columns,
  empty,
  rows,
  settled = true,
  children: row,
}: TableWords & {
  rows: Row[];
  /** False while no rows may not mean none (a read under way, a feature turned off): the empty line waits. */
  settled?: boolean;
  children: (row: Row) => JSX.Element;
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
      {rows.length === 0 && settled && empty !== undefined && <p class="muted">{empty}</p>}
    </>
  );
}
