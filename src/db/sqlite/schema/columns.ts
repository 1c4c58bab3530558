// The columns several SQLite tables share, as functions: a column's builder belongs to one table, so each
// table makes its own.
import { text } from "drizzle-orm/sqlite-core";

/** When the row was made, and when it lapses (it is pruned after). */
export const lifetime = () => ({
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});
