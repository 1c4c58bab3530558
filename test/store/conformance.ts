// The storage contract, as tests. Every database svc supports runs this suite through a thin runner
// that only opens a fresh, migrated store and cleans it up afterwards. Each aggregate's tests are in
// conformance/, named as its file in src/db/ is; this file runs them in one order on every store.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Store, VersionedStore } from "../../src/db/store.ts";
import { caching } from "../../src/cache/caching.ts";
import { administrationContract } from "./conformance/administration.ts";
import { auditContract } from "./conformance/audit.ts";
import { categoriesContract } from "./conformance/categories.ts";
import { categoryChangesContract } from "./conformance/category-changes.ts";
import { emailVerificationsContract } from "./conformance/email-verifications.ts";
import { newUser } from "./conformance/fixtures.ts";
import { idempotencyContract } from "./conformance/idempotency.ts";
import { identitiesContract } from "./conformance/identities.ts";
import { invitationsContract } from "./conformance/invitations.ts";
import { loadContract } from "./conformance/load.ts";
import { mailedTokensContract } from "./conformance/mailed-tokens.ts";
import { mailOutboxContract } from "./conformance/mail-outbox.ts";
import { mfaContract } from "./conformance/mfa.ts";
import { passkeysContract } from "./conformance/passkeys.ts";
import { resetsContract } from "./conformance/resets.ts";
import { sessionsContract } from "./conformance/sessions.ts";
import { throttleContract } from "./conformance/throttle.ts";
import { revocationsContract } from "./conformance/tokens.ts";
import { usersContract } from "./conformance/users.ts";
import { versionedContract } from "./conformance/versions.ts";

export { newUser } from "./conformance/fixtures.ts";

export interface StoreHarness {
  /** A fresh, migrated, empty store. */
  open(): Promise<VersionedStore>;
  /** Called after each test with the store it used. */
  dispose(store: VersionedStore): Promise<void>;
}

/**
 * Runs the contract on the store the harness opens, and the plain contract once more through the cache
 * layer, which must keep it: every result as the database's, every write seen at once.
 */
export function storeConformance(name: string, harness: StoreHarness): void {
  describe(`store conformance: ${name}`, () => {
    contract(harness);
    versionedContract(harness);
  });
  let raw: VersionedStore | undefined;
  describe(`store conformance: ${name}, through the cache layer`, () => {
    contract({
      async open() {
        raw = await harness.open();
        return caching(raw).store;
      },
      dispose: () => harness.dispose(raw!),
    });
  });
}

/** What every store, cached or not, must do. */
function contract<S extends Store>(harness: { open(): Promise<S>; dispose(store: S): Promise<void> }): void {
  let store: S;
  beforeEach(async () => {
    store = await harness.open();
  });
  afterEach(async () => {
    await harness.dispose(store);
  });

  const use = () => store;
  usersContract(use);
  categoriesContract(use);
  categoryChangesContract(use);
  throttleContract(use);
  revocationsContract(use);
  loadContract(use);
  administrationContract(use);
  resetsContract(use);
  mailedTokensContract(use);
  invitationsContract(use);
  emailVerificationsContract(use);
  auditContract(use);
  idempotencyContract(use);
  sessionsContract(use);
  mailOutboxContract(use);
  mfaContract(use);
  passkeysContract(use);
  identitiesContract(use);

  test("storage is ok while writes find room", async () => {
    await store.users.create(newUser("ann"));
    expect(store.storage()).toBe("ok");
  });

  // Its refusal, when the database does not answer, is test/e2e/outage.test.ts's (a proxy cut between them).
  test("ping resolves while the database answers", async () => {
    expect(await store.ping(1000)).toBeUndefined();
  });
}
