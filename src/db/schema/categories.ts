// The tables of categories: the categories, and the log of their changes subscriptions resume from.
import type { AccountTables } from "./accounts.ts";
import type { Kit } from "./kit.ts";

export function categoryTables(c: Kit, { users }: AccountTables) {
  const categories = c.table(
    "categories",
    {
      id: c.id("id").primaryKey(),
      name: c.text("name").notNull(),
      /** Trimmed, NFC, lower-cased name: uniqueness without regard to case. */
      nameKey: c.text("name_key").notNull(),
      description: c.text("description"),
      colorHex: c.text("color_hex").notNull(),
      icon: c.text("icon"),
      createdBy: c.id("created_by").references(() => users.id, { onDelete: "set null" }),
      createdAt: c.instant("created_at").notNull(),
      updatedAt: c.instant("updated_at").notNull(),
      /** 1 when created, one more with every update: what ifVersion is compared with. */
      version: c.integer("version").notNull().default(1),
    },
    (t) => [
      c.uniqueIndex("categories_name_key_uq").on(t.nameKey),
      c.index("categories_created_by_idx").on(t.createdBy),
    ],
  );

  /**
   * Every committed change to a category, in commit order (written by the categories' triggers: migration
   * category_event_log): what a subscription resumes from (`categoryEvents(after:)`). Bounded by
   * SVC_EVENTS_KEEP and SVC_EVENTS_KEEP_FOR.
   */
  const categoryEvents = c.table(
    "category_events",
    {
      /** Increasing in commit order, never reused: the cursor's number. */
      seq: c.serial("seq"),
      at: c.instant("at").notNull(),
      kind: c.text("kind").$type<"CREATED" | "UPDATED" | "DELETED">().notNull(),
      categoryId: c.id("category_id").notNull(),
      /** The category after the change, as JSON of its columns; null for DELETED. */
      row: c.text("row"),
    },
    (t) => [c.index("category_events_at_idx").on(t.at)],
  );

  return { categories, categoryEvents };
}
