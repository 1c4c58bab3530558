// SQLite's tables, declared in ../schema/ and made with SQLite's kit (kit.ts): what drizzle-kit reads
// (drizzle.config.ts) and the store's tables. Tables only: drizzle-kit and the parity test read every export as one.
import { sqliteTables as tables } from "./kit.ts";

export const { accountTokens, identities, invitations, loginThrottle, oidcCodes, passwordResets } = tables;
export const { refreshTokens, revokedTokens, sessions, users, auditEvents, idempotencyKeys, mailOutbox } = tables;
export const { svcDatabase, tableVersions, categories, categoryEvents, mfaChallenges, mfaRecoveryCodes } = tables;
export const { mfaTotp, passkeys, webauthnChallenges } = tables;
