import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { PRODUCTION_PASSWORD_COST } from "../../src/config/index.ts";
import { expectProblem, testApp } from "../helpers.ts";

const LOGIN = "/svc-api/v1/auth/login";
const fast = {
  maxFailures: 5,
  backoffBaseMs: 400,
  backoffMaxMs: 1600,
  clientMaxFailures: 1000,
  clientWindowMs: 60_000,
};

async function setup(loginThrottle = fast, trustProxy = 0, passwordCost?: { memoryCost: number; timeCost: number }) {
  const app = await testApp({ config: { loginThrottle, trustProxy, ...(passwordCost && { passwordCost }) } });
  const { password } = await app.signUp("ann");
  const login = (pw: string, headers: Record<string, string> = {}, username = "ann") =>
    app.call("POST", LOGIN, { body: { username, password: pw }, headers });
  return { ...app, password, login };
}

/** Moves the clock on by `ms` (blocks are reckoned by it); each test's end puts it back. */
async function after(ms: number): Promise<void> {
  setSystemTime(new Date(Date.now() + ms));
}
afterEach(() => setSystemTime());

describe("failed-login throttling", () => {
  test("after 5 consecutive failures: 429 too_many_requests with Retry-After, even for the right password", async () => {
    const { login, password } = await setup();
    for (let i = 0; i < 5; i++) expectProblem(await login("wrong password"), 401, "invalid_credentials");
    const blocked = await login(password);
    expectProblem(blocked, 429, "too_many_requests");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  test("blocks are time-bounded and double with each further failure, up to the maximum", async () => {
    const { login, password } = await setup();
    for (let i = 0; i < 5; i++) await login("wrong password");
    await after(450); // the first block: 400 ms
    expectProblem(await login("wrong password"), 401, "invalid_credentials"); // failure 6: 800 ms
    await after(450);
    expectProblem(await login(password), 429, "too_many_requests");
    await after(400);
    expect((await login(password)).status).toBe(200);
  });

  test("attempts during a block neither count nor extend it", async () => {
    const { login, password, store } = await setup();
    for (let i = 0; i < 5; i++) await login("wrong password");
    for (let i = 0; i < 10; i++) expectProblem(await login("wrong password"), 429, "too_many_requests");
    const state = await store.throttle.get(`user:${(await store.users.findByLogin("ann"))!.id}`);
    expect(state?.failures).toBe(5);
    await after(450);
    expect((await login(password)).status).toBe(200);
  });

  test("a success clears the account's count", async () => {
    const { login, password } = await setup();
    for (let i = 0; i < 4; i++) await login("wrong password");
    expect((await login(password)).status).toBe(200);
    for (let i = 0; i < 4; i++) expectProblem(await login("wrong password"), 401, "invalid_credentials");
    expect((await login(password)).status).toBe(200);
  });

  test("counts the account whether it is named by username, in any case, or by e-mail", async () => {
    const { login, password } = await setup();
    for (const name of ["ann", "ANN", "ann@example.com", "Ann", "ann@example.com"])
      await login("wrong password", {}, name);
    expectProblem(await login(password), 429, "too_many_requests");
  });

  test("unknown users are throttled exactly like real ones", async () => {
    const { login } = await setup();
    for (let i = 0; i < 5; i++) {
      expectProblem(await login("wrong password", {}, "ghost"), 401, "invalid_credentials");
      expectProblem(await login("wrong password"), 401, "invalid_credentials");
    }
    const ghost = await login("wrong password", {}, "ghost");
    const ann = await login("wrong password");
    expectProblem(ghost, 429, "too_many_requests");
    expect(ghost.body).toEqual(ann.body);
  });

  test("rotating X-Forwarded-For never resets the per-account count", async () => {
    const { login, password } = await setup(fast, 1);
    for (let i = 0; i < 5; i++) await login("wrong password", { "x-forwarded-for": `10.0.0.${i}` });
    expectProblem(await login(password, { "x-forwarded-for": "10.0.0.99" }), 429, "too_many_requests");
  });

  test("limits failures per client, trusting X-Forwarded-For only when SVC_TRUST_PROXY says so", async () => {
    const perClient = { ...fast, clientMaxFailures: 3 };
    const trusted = await setup(perClient, 1);
    for (const name of ["u1", "u2", "u3"])
      await trusted.login("wrong password", { "x-forwarded-for": "203.0.113.7" }, name);
    expectProblem(
      await trusted.login(trusted.password, { "x-forwarded-for": "203.0.113.7" }),
      429,
      "too_many_requests",
    );
    // Another client behind the same proxy is unaffected; a spoofed left-hand entry changes nothing.
    expect((await trusted.login(trusted.password, { "x-forwarded-for": "198.51.100.1" })).status).toBe(200);
    expectProblem(
      await trusted.login(trusted.password, { "x-forwarded-for": "1.2.3.4, 203.0.113.7" }),
      429,
      "too_many_requests",
    );

    const untrusted = await setup(perClient, 0);
    for (const [i, name] of ["u1", "u2", "u3"].entries())
      await untrusted.login("wrong password", { "x-forwarded-for": `192.0.2.${i}` }, name);
    expectProblem(
      await untrusted.login(untrusted.password, { "x-forwarded-for": "192.0.2.200" }),
      429,
      "too_many_requests",
    );
  });
});

describe("failed-login throttling under concurrency: the attempt is reserved before the password is checked", () => {
  const slow = { ...fast, backoffBaseMs: 60_000, backoffMaxMs: 60_000 };
  const statuses = (replies: Array<{ status: number }>) => replies.map((r) => r.status);
  const count = (replies: Array<{ status: number }>, status: number) =>
    replies.filter((r) => r.status === status).length;

  test("30 parallel wrong passwords for one account: at most 5 are checked, the rest get 429", async () => {
    const { login } = await setup(slow);
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`guess ${i}`)));
    expect(count(replies, 401)).toBeLessThanOrEqual(5);
    expect(count(replies, 401) + count(replies, 429)).toBe(30);
    for (const reply of replies) if (reply.status === 429) expectProblem(reply, 429, "too_many_requests");
  });

  test("a correct password inside a burst of wrong ones: at most 4 wrong checked before it, 5 after (a new run)", async () => {
    // A success ends a run of failures, so the burst must have been counted in full before one lands:
    // with cheap test hashing a check could finish (and its success clear the count) before the last
    // of the 30 attempts had arrived, which let a 6th be checked. With a verify of ~100 ms every attempt
    // is counted long before. (The throttle's own rule is held exactly in test/throttle.test.ts.)
    const { login, password } = await setup(slow, 0, { memoryCost: 19456, timeCost: 8 });
    const replies = await Promise.all([
      ...Array.from({ length: 15 }, (_, i) => login(`guess ${i}`)),
      login(password),
      ...Array.from({ length: 14 }, (_, i) => login(`more ${i}`)),
    ]);
    // A success ends a run of failures. Attempts that waited for a reservation (a right password is not
    // refused for the others in flight) are checked after it, as a new run: at most 4 wrong before the one
    // success (a 5th blocks it) and 5 after, as an attacker sending them after the success would get anyway.
    const successes = count(replies, 200);
    expect(successes).toBeLessThanOrEqual(1);
    expect(count(replies, 401)).toBeLessThanOrEqual(5 * (successes + 1) - successes);
    expect(statuses(replies).filter((s) => ![200, 401, 429].includes(s))).toEqual([]);
  });

  test("8 simultaneous correct logins to one account: all 200, none refused for the others in flight", async () => {
    const { login, password } = await setup(slow);
    const replies = await Promise.all(Array.from({ length: 8 }, () => login(password)));
    expect(statuses(replies)).toEqual(Array(8).fill(200));
  });

  test("20 simultaneous correct logins at the production hashing cost: all 200", async () => {
    const { login, password } = await setup(slow, 0, PRODUCTION_PASSWORD_COST);
    const replies = await Promise.all(Array.from({ length: 20 }, () => login(password)));
    expect(statuses(replies)).toEqual(Array(20).fill(200));
  });

  test("a burst of 200: at most 5 checked", async () => {
    const { login } = await setup(slow);
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => login(`guess ${i}`)));
    expect(count(replies, 401)).toBeLessThanOrEqual(5);
    expect(count(replies, 429)).toBeGreaterThanOrEqual(195);
  });

  test("the per-client limit holds under a burst across many accounts", async () => {
    const { login } = await setup({ ...slow, clientMaxFailures: 10 }, 1);
    const headers = { "x-forwarded-for": "203.0.113.9" };
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login("wrong password", headers, `name${i}`)),
    );
    expect(count(replies, 401)).toBeLessThanOrEqual(10);
    expect(count(replies, 401) + count(replies, 429)).toBe(40);
  });

  test("a success releases its reservation: the client's count is failures only", async () => {
    const { login, password } = await setup({ ...slow, clientMaxFailures: 3 }, 1);
    const headers = { "x-forwarded-for": "203.0.113.10" };
    for (let i = 0; i < 5; i++) expect((await login(password, headers)).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expectProblem(await login("wrong password", headers, `other${i}`), 401, "invalid_credentials");
    expect((await login(password, headers)).status).toBe(200);
    expectProblem(await login("wrong password", headers, "other9"), 401, "invalid_credentials");
    expectProblem(await login(password, headers), 429, "too_many_requests");
  });
});
