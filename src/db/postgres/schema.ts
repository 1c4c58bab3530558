// PostgreSQL tables, by area in schema/: what drizzle-kit reads (drizzle.config.ts) and the store's tables.
// The same columns as sqlite/schema.ts (a parity test holds them together), with native uuid and
// timestamptz types. Tables only: a parity test and drizzle-kit read every export as one.
export { accountTokens, invitations, passwordResets, users } from "./schema/accounts.ts";
export { loginThrottle, refreshTokens, revokedTokens, sessions } from "./schema/accounts.ts";
export { identities, oidcCodes } from "./schema/accounts.ts";
export { auditEvents, idempotencyKeys, mailOutbox, svcDatabase, tableVersions } from "./schema/bookkeeping.ts";
export { categories, categoryEvents } from "./schema/categories.ts";
export { mfaChallenges, mfaRecoveryCodes, mfaTotp, passkeys, webauthnChallenges } from "./schema/second-factors.ts";
