// What `svc copy` reads from the source: every row of each table it moves, a page at a time in key order,
// so that no table is held in memory whole.
import type { Store } from "../db/store.ts";

/** Rows read per statement. */
export const PAGE = 1000;

/** Every page `read` gives, each read after the key of the last one's last row; `lastKey` is undefined on an empty page. */
async function* pagesOf<P>(
  read: (after?: string) => P | PromiseLike<P>,
  lastKey: (page: P) => string | undefined,
): AsyncGenerator<P> {
  let after: string | undefined;
  for (;;) {
    const page = await read(after);
    const last = lastKey(page);
    if (last === undefined) return;
    yield page;
    after = last;
  }
}

/** Pages of rows, keyed by `key`. */
const rowPages = <T>(key: (row: T) => string, read: (after?: string) => T[] | PromiseLike<T[]>) =>
  pagesOf(read, (rows) => (rows.length === 0 ? undefined : key(rows[rows.length - 1]!)));

const byId = (row: { id: string }) => row.id;
const byDigest = (row: { digest: string }) => row.digest;
const byUser = (row: { userId: string }) => row.userId;

/**
 * The source's tables, a page at a time: users (hashes and token versions included), sessions with their
 * refresh tokens (users stay signed in), the audit log, mail and its tokens, second factors, identities at
 * OpenID providers (a login's second steps, WebAuthn challenges and one-time sign-in codes live minutes: not
 * copied).
 */
export function sourcePages({ users, sessions, audit, mail, mfa, identities }: Store) {
  return {
    users: rowPages(byId, (after) => users.list(after === undefined ? { limit: PAGE } : { limit: PAGE, after })),
    sessions: pagesOf(
      (after) => sessions.page(PAGE, after),
      (batch) => batch.sessions[batch.sessions.length - 1]?.id,
    ),
    audit: rowPages(byId, (after) => audit.page(PAGE, after)),
    mail: rowPages(byId, (after) => mail.page(PAGE, after)),
    accountTokens: rowPages(byDigest, (after) => mail.tokenPage(PAGE, after)),
    totp: rowPages(byUser, (after) => mfa.totpPage(PAGE, after)),
    recoveryCodes: rowPages(byDigest, (after) => mfa.recoveryCodePage(PAGE, after)),
    passkeys: rowPages(byId, (after) => mfa.passkeyPage(PAGE, after)),
    identities: rowPages(byId, (after) => identities.page(PAGE, after)),
  };
}
