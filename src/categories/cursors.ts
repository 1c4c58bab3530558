// A connection's cursors: a category's place in one order (the order's name, the sorted field's value and
// the id), as opaque base64url text. A cursor is taken back only by the order it came from, and only when it
// is exactly what this file writes: anything else is the client's mistake, never a query.
import type { CategoryOrder, CategoryPosition, CategoryRecord } from "../db/store.ts";
import { invalidFields } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import { unstorable } from "../lib/text.ts";

/** Longer than any cursor written here: a name of 64 characters JSON spells in 6 (\u0001), and the rest. */
const CURSOR_MAX = 1024;

/** The order's name, as a cursor carries it: `name`, `createdAt:desc`. */
function orderName({ field, descending }: CategoryOrder): string {
  return descending ? `${field}:desc` : field;
}

/** The category's cursor in the order. */
export function cursorOf(order: CategoryOrder, category: CategoryRecord): string {
  return Buffer.from(JSON.stringify([orderName(order), category[order.field], category.id])).toString("base64url");
}

/** The place a cursor (given as `argument`) names in `order`; BAD_USER_INPUT naming the argument otherwise. */
export function positionOf(cursor: string, order: CategoryOrder, argument: "after" | "before"): CategoryPosition {
  const refuse = (message: string) => invalidFields([{ field: argument, message }]);
  const parts = decoded(cursor);
  if (parts === null) throw refuse("must be a cursor from a categoriesConnection page");
  const [name, value, id] = parts;
  if (name !== orderName(order))
    throw refuse("is a cursor of another orderBy: page with the orderBy the cursor came from");
  const key = parseId(id);
  if (key === null || !placeable(order, value)) throw refuse("must be a cursor from a categoriesConnection page");
  return { value, id: key };
}

/** The cursor's three strings, or null when it is not one this file wrote. */
function decoded(cursor: string): [string, string, string] | null {
  if (cursor.length > CURSOR_MAX || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((part) => typeof part === "string")) return null;
  return parts as [string, string, string];
}

/** Whether the value can be a place in the order: a name the database can compare, or an instant as stored. */
function placeable({ field }: CategoryOrder, value: string): boolean {
  if (field === "name") return value.length > 0 && value.length <= 256 && !unstorable(value);
  // Years 0001-9999, as both databases hold them; and exactly as the store writes an instant.
  if (!/^(?!0000)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value)) return false;
  const at = Date.parse(value);
  return !Number.isNaN(at) && new Date(at).toISOString() === value;
}
