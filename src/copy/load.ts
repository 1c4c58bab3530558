// The target's side of `svc copy`: every record loaded exactly as given (ids, hashes, token versions,
// timestamps) in one transaction, refused or rolled back unless the counts come out as the source's.
import { renewEpoch } from "../db/category-events.ts";
import { count } from "drizzle-orm";
import type { AuditEvent } from "../db/audit.ts";
import type { AccountTokenRow, OutboxRecord } from "../db/mail-outbox.ts";
import type { CategoryRecord } from "../db/categories.ts";
import type { Db, Dialect } from "../db/dialect.ts";
import { nameKey } from "../db/records.ts";
import type { SessionBatch } from "../db/sessions.ts";
import { LoadRefused } from "../db/store-errors.ts";
import type { UserRecord } from "../db/records.ts";
import { factorCountsIn } from "../db/mfa-copy.ts";
import { identityCountIn, type IdentityRecord } from "../db/identities.ts";
import type { FactorCounts, PasskeyRow, RecoveryCodeRecord, TotpRecord } from "../db/mfa-records.ts";
import { chunks } from "./chunks.ts";

/** How many users and categories a database holds: what a copy is checked by. */
export interface Counts {
  users: number;
  categories: number;
}

/** What `svc copy` moves: users with their hashes and token versions, categories with their creators, sessions. */
export interface LoadData {
  /** Users in batches, so a large database is never held whole. */
  users: AsyncIterable<UserRecord[]>;
  categories: CategoryRecord[];
  /** Sessions in batches, loaded after the users they belong to. */
  sessions?: AsyncIterable<SessionBatch>;
  /** The audit log in batches, oldest first. */
  audit?: AsyncIterable<AuditEvent[]>;
  /** The mail outbox in batches (pending mails are sent by the target's svc), and the tokens mails carry. */
  mail?: AsyncIterable<OutboxRecord[]>;
  accountTokens?: AsyncIterable<AccountTokenRow[]>;
  /**
   * Second factors, each in batches: a copy that dropped them would silently leave those accounts with a
   * password alone. A login's second steps and WebAuthn challenges live minutes and are not copied.
   */
  totp?: AsyncIterable<TotpRecord[]>;
  recoveryCodes?: AsyncIterable<RecoveryCodeRecord[]>;
  passkeys?: AsyncIterable<PasskeyRow[]>;
  /** Identities at OpenID providers, in batches: without them an account made through one could not sign in. */
  identities?: AsyncIterable<IdentityRecord[]>;
  /** The source's identity, which the target takes (a copy is the same database, moved); a new one when not given. */
  identity?: string;
}

export interface LoadOptions {
  /** Empty the tables first; without it, loading into a non-empty store is refused. */
  replace: boolean;
  /** The counts the store must hold once loaded; anything else rolls the load back. */
  expect: Counts;
  /** The second-factor rows the store must hold once loaded, likewise: no account loses its factor unseen. */
  expectFactors?: FactorCounts;
  /** The identities at OpenID providers the store must hold once loaded, likewise. */
  expectIdentities?: number;
  onProgress?: (loaded: Counts) => void;
}

/** Rows per insert statement of a bulk load: within every database's limit on bound parameters. */
const LOAD_BATCH = 500;

/** Store.counts, within a transaction or not. */
export async function countsIn(db: Db, { tables }: Dialect): Promise<Counts> {
  const [users] = await db.select({ n: count() }).from(tables.users);
  const [categories] = await db.select({ n: count() }).from(tables.categories);
  return { users: users!.n, categories: categories!.n };
}

/** Store.load, in the transaction the store opens for it (untimed: it lasts as long as its data). */
export async function load(tx: Db, dialect: Dialect, data: LoadData, options: LoadOptions): Promise<Counts> {
  const { users, categories, loginThrottle, revokedTokens, sessions, refreshTokens, passwordResets, auditEvents } =
    dialect.tables;
  await dialect.silenceFeed(tx);
  const before = await countsIn(tx, dialect);
  if (!options.replace && (before.users > 0 || before.categories > 0)) {
    throw new LoadRefused(`the target already holds ${before.users} users and ${before.categories} categories`);
  }
  if (options.replace) {
    const { passkeys, mfaRecoveryCodes, mfaTotp, mfaChallenges, webauthnChallenges } = dialect.tables;
    for (const table of [
      dialect.tables.identities,
      dialect.tables.oidcCodes,
      passkeys,
      mfaRecoveryCodes,
      mfaTotp,
      mfaChallenges,
      webauthnChallenges,
      dialect.tables.idempotencyKeys,
      dialect.tables.invitations,
      dialect.tables.mailOutbox,
      dialect.tables.accountTokens,
      refreshTokens,
      sessions,
      passwordResets,
      auditEvents,
      categories,
      users,
      loginThrottle,
      revokedTokens,
    ])
      await tx.delete(table);
  }
  const loaded = { users: 0, categories: 0 };
  for await (const batch of data.users) {
    for (const part of chunks(batch, LOAD_BATCH)) {
      await tx.insert(users).values(part.map((user) => ({ ...user, usernameKey: nameKey(user.username) })));
    }
    loaded.users += batch.length;
    options.onProgress?.({ ...loaded });
  }
  for (const part of chunks(data.categories, LOAD_BATCH)) {
    await tx.insert(categories).values(part.map((category) => ({ ...category, nameKey: nameKey(category.name) })));
    loaded.categories += part.length;
    options.onProgress?.({ ...loaded });
  }
  for await (const batch of data.sessions ?? []) {
    for (const part of chunks(batch.sessions, LOAD_BATCH)) await tx.insert(sessions).values(part);
    for (const part of chunks(batch.refreshTokens, LOAD_BATCH)) await tx.insert(refreshTokens).values(part);
  }
  for await (const batch of data.totp ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(dialect.tables.mfaTotp).values(part);
  }
  for await (const batch of data.recoveryCodes ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(dialect.tables.mfaRecoveryCodes).values(part);
  }
  for await (const batch of data.passkeys ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(dialect.tables.passkeys).values(part);
  }
  for await (const batch of data.identities ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(dialect.tables.identities).values(part);
  }
  for await (const batch of data.audit ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(auditEvents).values(part);
  }
  for await (const batch of data.mail ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(dialect.tables.mailOutbox).values(part);
  }
  for await (const batch of data.accountTokens ?? []) {
    for (const part of chunks(batch, LOAD_BATCH)) await tx.insert(dialect.tables.accountTokens).values(part);
  }
  // The source's identity (the same database, moved), and a new epoch: its event numbers start over here, so
  // subscribers resuming from an earlier cursor start over (RESYNC).
  await renewEpoch(tx, dialect.tables, data.identity);
  const after = await countsIn(tx, dialect);
  if (after.users !== options.expect.users || after.categories !== options.expect.categories) {
    throw new LoadRefused(
      `counts after loading (${JSON.stringify(after)}) differ from the source (${JSON.stringify(options.expect)})`,
    );
  }
  if (options.expectFactors) {
    const factors = await factorCountsIn(tx, dialect.tables);
    if (JSON.stringify(factors) !== JSON.stringify(options.expectFactors)) {
      throw new LoadRefused(
        `second factors after loading (${JSON.stringify(factors)}) differ from the source (${JSON.stringify(options.expectFactors)})`,
      );
    }
  }
  if (options.expectIdentities !== undefined) {
    const identities = await identityCountIn(tx, dialect.tables);
    if (identities !== options.expectIdentities)
      throw new LoadRefused(
        `${identities} identities after loading differ from the source's ${options.expectIdentities}`,
      );
  }
  return after;
}
