// The one store: each aggregate's Drizzle code (users.ts, categories.ts, sessions.ts, ...), written once
// for every database svc supports, joined into the Store. What differs between the databases
// (opening, migrating, transactions, reading driver errors) comes in with the Dialect.
import { countsIn, load } from "../copy/load.ts";
import { userAdministration } from "./administration.ts";
import { auditStore } from "./audit.ts";
import { categoryStore } from "./categories.ts";
import { categoryEventLog } from "./category-events.ts";
import { sessionStore } from "./sessions.ts";
import { mfaStore } from "./mfa.ts";
import { idempotencyStore } from "./idempotency.ts";
import { emailVerificationStore } from "./email-verifications.ts";
import { invitationStore } from "./invitations.ts";
import { mailedResetStore } from "./mailed-resets.ts";
import { emailChangeStore } from "./email-changes.ts";
import { mailOutboxStore, wakingSenders } from "./mail-outbox.ts";
import { passkeyStore } from "./passkeys.ts";
import { identityStore } from "./identities.ts";
import { resetStore } from "./resets.ts";
import { throttleStore } from "./throttle.ts";
import { revocationStore, tokenReads } from "./tokens.ts";
import { userStore, type UserStore } from "./users.ts";
import type { Dialect } from "./dialect.ts";
import type { VersionedStore } from "./store.ts";

export function drizzleStore(opened: Dialect): VersionedStore {
  // Its transactions wake this process's mail sender once mail they enqueued has committed.
  const dialect = wakingSenders(opened);
  const { db, run } = dialect;
  const users: UserStore = { ...userStore(dialect), ...userAdministration(dialect) };
  const { tokenState, versions } = tokenReads(dialect);

  return {
    kind: dialect.kind,
    users,
    categories: categoryStore(dialect),
    throttle: throttleStore(dialect),
    revocations: revocationStore(dialect),
    sessions: sessionStore(dialect),
    resets: resetStore(dialect),
    invitations: invitationStore(dialect),
    audit: auditStore(dialect),
    idempotency: idempotencyStore(dialect),
    mail: mailOutboxStore(dialect),
    mailedResets: mailedResetStore(dialect),
    emailChanges: emailChangeStore(dialect),
    emailVerifications: emailVerificationStore(dialect),
    mfa: mfaStore(dialect),
    passkeys: passkeyStore(dialect),
    identities: identityStore(dialect),
    changes: { listen: dialect.feed.listen },
    categoryEvents: categoryEventLog(dialect),
    async tokenHolder(userId, jti, sessionId) {
      const state = await tokenState(userId, jti, sessionId);
      const user = state && (await users.findById(userId));
      return user ? { user, revoked: state.revoked, expiresAt: state.expiresAt } : null;
    },
    tokenState,
    versions,
    settled: dialect.postgres?.settled,
    tokenChecks: dialect.postgres?.tokenChecks,
    ping: dialect.ping,
    storage: dialect.storage,
    pool: dialect.pool,
    counts: () => run(() => countsIn(db, dialect)),
    load: (data, options) => dialect.transaction((tx) => load(tx, dialect, data, options)),
    close: dialect.close,
  };
}
