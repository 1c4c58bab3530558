// The requests a stranger may make about an address (a reset link; a verification link by address while
// verification is required) must not tell, by their timing, whether an account has it. What a test can
// hold without a clock: the sender is never woken before the answer, both paths wake it alike (a reset
// link waits for the poll; a resend by address wakes it after the answer, whichever path ran), and both
// paths make the same store calls. bench/reset-request.ts measures the time (bench/results.md).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { onMailEnqueued, wakeScheduled } from "../../src/db/mail-outbox.ts";
import type { VersionedStore } from "../../src/db/store.ts";
import { testApp, testConfig } from "../helpers.ts";
import { appVerifying, RESEND, signUpOnly, verifiedUser } from "../support/verification.ts";
import { waitUntil } from "../support/wait.ts";

let wakes = 0;
let unsubscribe = () => {};
beforeEach(() => {
  wakes = 0;
  unsubscribe = onMailEnqueued(() => wakes++);
});
afterEach(() => unsubscribe());

/** Waits out the wake a sign-up's mail scheduled, so that what follows starts from none. */
async function settled() {
  await waitUntil(() => !wakeScheduled(), { what: "the sign-up's wake" });
  wakes = 0;
}

/** The store, counting each call to the methods a request about an address may make. */
function counting(calls: string[]) {
  return (store: VersionedStore): VersionedStore => {
    const count = <T extends object>(name: string, part: T): T =>
      new Proxy(part, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            calls.push(`${name}.${String(key)}`);
            return value.apply(target, args);
          };
        },
      });
    return {
      ...store,
      users: count("users", store.users),
      throttle: count("throttle", store.throttle),
      mail: count("mail", store.mail),
      emailVerifications: count("emailVerifications", store.emailVerifications),
      mailedResets: count("mailedResets", store.mailedResets),
    };
  };
}

describe("the sender's wake against the answer", () => {
  test("a reset request wakes no sender on either path: the link waits for the poll", async () => {
    const app = await testApp();
    await app.signUp("ann");
    await settled();
    for (const email of ["ann@example.com", "nobody@example.com"]) {
      const reply = await app.call("POST", "/svc-api/v1/auth/password-reset/request", { body: { email } });
      expect(reply.status).toBe(202);
      expect({ email, wakes, scheduled: wakeScheduled() }).toEqual({ email, wakes: 0, scheduled: false });
    }
    expect(await app.store.mail.list({ recipient: "ann@example.com", status: "pending", limit: 10 })).toHaveLength(2);
  });

  test("a resend by address wakes the sender after the answer, on both paths alike", async () => {
    const app = await appVerifying("required");
    await signUpOnly(app, "ann");
    await settled();
    for (const email of ["ann@example.com", "nobody@example.com"]) {
      const reply = await app.call("POST", RESEND, { body: { email } });
      expect(reply.status).toBe(202);
      // Not before the answer: due, and run once the answer is out.
      expect({ email, wakes, scheduled: wakeScheduled() }).toEqual({ email, wakes: 0, scheduled: true });
      await waitUntil(() => wakes === 1, { what: `the wake after the answer for ${email}` });
      wakes = 0;
    }
  });

  test("a resend by address makes the same store calls whether or not an unverified account has it", async () => {
    const calls: string[] = [];
    const app = await testApp({
      config: { mail: { ...testConfig().mail, verification: "required" } },
      store: counting(calls),
    });
    await signUpOnly(app, "ann");
    await verifiedUser(app, "bob");
    const made = (email: string) =>
      (async () => {
        calls.length = 0;
        expect((await app.call("POST", RESEND, { body: { email } })).status).toBe(202);
        // The write is one transaction either way: the token with its mail, or the same statements finding
        // nothing (MailOutboxStore.decoy); named alike here.
        return calls.map((call) => (call === "emailVerifications.issue" ? "mail.decoy" : call));
      })();
    const unverified = await made("ann@example.com");
    expect(unverified).toContain("mail.decoy");
    expect(await made("nobody@example.com")).toEqual(unverified);
    expect(await made("bob@example.com")).toEqual(unverified);
    const sent = await app.store.audit.list({ action: "email_verification.sent", limit: 10 });
    expect(sent.map((event) => [event.targetId !== null, event.outcome])).toEqual([
      [false, "failure"],
      [false, "failure"],
      [true, "success"],
      [true, "success"],
      [true, "success"],
    ]);
  });
});
