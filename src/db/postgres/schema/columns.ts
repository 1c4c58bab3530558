// The columns several PostgreSQL tables share, as functions: a column's builder belongs to one table, so each
// table makes its own.
import { instant } from "../instant.ts";

/** When the row was made, and when it lapses (it is pruned after). */
export const lifetime = () => ({
  createdAt: instant("created_at").notNull(),
  expiresAt: instant("expires_at").notNull(),
});
