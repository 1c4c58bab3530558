// The categories view's list, kept as svc lists it (by name without regard to case, then id) while
// changes are applied to it one by one.
import type { CategoryEvent, Category as SchemaCategory } from "@svc/client";

/** The fields the console selects (categories.tsx's FIELDS). */
export type Category = Pick<
  SchemaCategory,
  "id" | "name" | "description" | "colorHex" | "icon" | "createdBy" | "version"
>;

/** svc's sort key for a name (src/db/records.ts, nameKey). */
const keyOf = (name: string) => name.trim().normalize("NFC").toLowerCase();

function before(a: Category, b: Category): number {
  const [x, y] = [keyOf(a.name), keyOf(b.name)];
  if (x !== y) return x < y ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The list after the change. Applying one the list already shows changes nothing (a version it holds
 * already, an id it no longer has), so changes that arrived while the list was being read may be
 * applied again to it.
 */
export function applied(rows: Category[], event: CategoryEvent): Category[] {
  const category = event.category;
  if (event.kind === "DELETED")
    return rows.some((row) => row.id === event.id) ? rows.filter((row) => row.id !== event.id) : rows;
  if (!category || event.kind === "RESYNC") return rows;
  const held = rows.find((row) => row.id === category.id);
  if (held && held.version >= category.version) return rows;
  return [...rows.filter((row) => row.id !== category.id), category].sort(before);
}
