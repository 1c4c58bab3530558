// The SQLite tables of categories: the categories, and the log of their changes subscriptions resume from.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./accounts.ts";

export const categories = sqliteTable(
  "categories",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Trimmed, NFC, lower-cased name: uniqueness without regard to case. */
    nameKey: text("name_key").notNull(),
    description: text("description"),
    colorHex: text("color_hex").notNull(),
    icon: text("icon"),
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** 1 when created, one more with every update: what ifVersion is compared with. */
    version: integer("version").notNull().default(1),
  },
  (t) => [uniqueIndex("categories_name_key_uq").on(t.nameKey), index("categories_created_by_idx").on(t.createdBy)],
);

/**
 * Every committed change to a category, in commit order (written by the categories' triggers: migration
 * category_event_log): what a subscription resumes from (`categoryEvents(after:)`). Bounded by
 * SVC_EVENTS_KEEP and SVC_EVENTS_KEEP_FOR.
 */
export const categoryEvents = sqliteTable(
  "category_events",
  {
    /** Increasing in commit order, never reused: the cursor's number. */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    at: text("at").notNull(),
    kind: text("kind").$type<"CREATED" | "UPDATED" | "DELETED">().notNull(),
    categoryId: text("category_id").notNull(),
    /** The category after the change, as JSON of its columns; null for DELETED. */
    row: text("row"),
  },
  (t) => [index("category_events_at_idx").on(t.at)],
);
