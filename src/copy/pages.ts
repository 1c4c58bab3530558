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
const rowPages = <T>(read: (after?: string) => T[] | PromiseLike<T[]>, key: (row: T) => string) =>
  pagesOf(read, (rows) => (rows.length === 0 ? undefined : key(rows[rows.length - 1]!)));

/**
 * The source's tables, a page at a time: users (hashes and token versions included), sessions with their
 * refresh tokens (users stay signed in), the audit log, mail and its tokens, second factors (a login's
 * second steps and WebAuthn challenges live minutes: not copied).
 */
export function sourcePages(source: Store) {
  return {
    users: rowPages(
      (after) => source.users.list(after === undefined ? { limit: PAGE } : { limit: PAGE, after }),
      (user) => user.id,
    ),
    sessions: pagesOf(
      (after) => source.sessions.page(PAGE, after),
      (batch) => batch.sessions[batch.sessions.length - 1]?.id,
    ),
    audit: rowPages(
      (after) => source.audit.page(PAGE, after),
      (event) => event.id,
    ),
    mail: rowPages(
      (after) => source.mail.page(PAGE, after),
      (mail) => mail.id,
    ),
    accountTokens: rowPages(
      (after) => source.mail.tokenPage(PAGE, after),
      (token) => token.digest,
    ),
    totp: rowPages(
      (after) => source.mfa.totpPage(PAGE, after),
      (row) => row.userId,
    ),
    recoveryCodes: rowPages(
      (after) => source.mfa.recoveryCodePage(PAGE, after),
      (row) => row.digest,
    ),
    passkeys: rowPages(
      (after) => source.mfa.passkeyPage(PAGE, after),
      (row) => row.id,
    ),
  };
}
