// SQLite tables of sign-in through OpenID providers: the identities linked to accounts, and the one-time
// codes an app trades for a session (docs/oidc.md).
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./schema.ts";

/** An account's identity at an OpenID provider: the issuer and subject pair is the identity, never the e-mail. */
export const identities = sqliteTable(
  "identities",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** The provider's name in SVC_OIDC_PROVIDERS when it was linked: what the account's list shows. */
    provider: text("provider").notNull(),
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    /** The address the provider gave at the last sign-in, if any: shown, never matched on. */
    email: text("email"),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [uniqueIndex("identities_issuer_subject_uq").on(t.issuer, t.subject), index("identities_user_id_idx").on(t.userId)],
);

/** One-time codes a flow with mode=code ends in (60 s), traded once for a session; kept by digest only. */
export const oidcCodes = sqliteTable(
  "oidc_codes",
  {
    digest: text("digest").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** How the user signed in (RFC 8176's names, comma-separated), for the session the code becomes. */
    amr: text("amr").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [index("oidc_codes_expires_at_idx").on(t.expiresAt)],
);
