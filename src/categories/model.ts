// Rules for category fields, as the GraphQL inputs carry them.
import type { CategoryPatch } from "../db/store.ts";
import type { FieldError } from "../errors/index.ts";
import { unstorable, UNSTORABLE_MESSAGE } from "../lib/text.ts";

export const DEFAULT_COLOR = "#64748B";
const NAME_MAX = 64;
const DESCRIPTION_MAX = 500;
const COLOR = /^#[0-9A-Fa-f]{6}$/;
const ICON = /^[A-Za-z0-9_:.-]{1,64}$/;

export interface CategoryInput {
  name?: string | null;
  description?: string | null;
  colorHex?: string | null;
  icon?: string | null;
}

/** The fields as they are stored, and any problems with them. Absent fields stay absent. */
export interface CleanCategory {
  fields: CategoryPatch;
  problems: FieldError[];
}

export function cleanCategory(input: CategoryInput): CleanCategory {
  const fields: CleanCategory["fields"] = {};
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });

  if (input.name !== undefined) {
    const name = input.name?.trim() ?? "";
    if (unstorable(name)) problem("name", UNSTORABLE_MESSAGE);
    else if (name.length === 0 || [...name].length > NAME_MAX)
      problem("name", `must be 1-${NAME_MAX} characters after trimming`);
    else fields.name = name;
  }
  if (input.description !== undefined) {
    if (input.description !== null && unstorable(input.description)) problem("description", UNSTORABLE_MESSAGE);
    else if (input.description !== null && [...input.description].length > DESCRIPTION_MAX) {
      problem("description", `must be at most ${DESCRIPTION_MAX} characters`);
    } else fields.description = input.description;
  }
  if (input.colorHex !== undefined) {
    if (input.colorHex === null || !COLOR.test(input.colorHex)) problem("colorHex", "must be #RRGGBB, e.g. #64748B");
    else fields.colorHex = input.colorHex.toUpperCase();
  }
  if (input.icon !== undefined) {
    if (input.icon !== null && !ICON.test(input.icon)) problem("icon", "must be 1-64 of letters, digits, - _ : .");
    else fields.icon = input.icon;
  }
  return { fields, problems };
}
