// @svc/client's auth.sessions against the app in process: your live sessions (this client's marked current)
// and ending one, another device's or this client's own. The routes' rules are test/api/sessions*.test.ts's.
import { describe, expect, test } from "bun:test";
import { SvcError } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { failure } from "../support/failure.ts";
import { clientOf } from "../support/in-process-client.ts";

/** ann signed in on two clients: this one, and a phone. */
async function twoDevices() {
  const app = await testApp();
  const ann = await app.signUp("ann");
  const here = clientOf(app);
  const phone = clientOf(app);
  await phone.auth.login({ username: "ann", password: ann.password });
  await here.auth.login({ username: "ann", password: ann.password });
  return { app, ann, here, phone };
}

describe("auth.sessions", () => {
  test("list: every live session of the account, newest first, this client's marked current", async () => {
    const { here, phone } = await twoDevices();
    const listed = await here.auth.sessions.list();
    // The sign-up's own login is one too.
    expect(listed).toHaveLength(3);
    expect(listed.map((s) => s.current)).toEqual([true, false, false]);
    expect(listed[0]).toMatchObject({ amr: ["pwd"], mfa_at: null });
    const fromPhone = await phone.auth.sessions.list();
    expect(fromPhone.map((s) => s.id)).toEqual(listed.map((s) => s.id));
    expect(fromPhone.findIndex((s) => s.current)).toBe(1);
  });

  test("end: another device's session stops at once; its client finds itself signed out", async () => {
    const { here, phone } = await twoDevices();
    const theirs = (await phone.auth.sessions.list()).find((s) => s.current)!;
    await here.auth.sessions.end(theirs.id);
    expect((await here.auth.sessions.list()).map((s) => s.id)).not.toContain(theirs.id);
    const refused = await failure<SvcError>(phone.users.me());
    expect({ status: refused?.status, code: refused?.code }).toEqual({ status: 401, code: "unauthorized" });
    expect(phone.auth.session).toBeNull();
    expect(here.auth.session).not.toBeNull();
  });

  test("end with this client's own listed session: svc ends it, and the client forgets it", async () => {
    const { here } = await twoDevices();
    const changes: unknown[] = [];
    here.auth.onChange((session) => changes.push(session));
    const mine = (await here.auth.sessions.list()).find((s) => s.current)!;
    await here.auth.sessions.end(mine);
    expect(here.auth.session).toBeNull();
    expect(changes).toEqual([null]);
  });

  test("end: an id that is no session of yours is not_found (404), another account's too", async () => {
    const { app, here } = await twoDevices();
    const bob = clientOf(app);
    const bobs = await app.signUp("bob");
    await bob.auth.login({ username: "bob", password: bobs.password });
    const his = (await bob.auth.sessions.list())[0]!;
    for (const id of [crypto.randomUUID(), "not-an-id", his.id]) {
      const error = await failure<SvcError>(here.auth.sessions.end(id));
      expect({ id, status: error?.status, code: error?.code }).toEqual({ id, status: 404, code: "not_found" });
    }
    expect(await bob.auth.sessions.list()).toHaveLength(2);
  });

  test("signed out: unauthorized (401)", async () => {
    const app = await testApp();
    const error = await failure<SvcError>(clientOf(app).auth.sessions.list());
    expect({ status: error?.status, code: error?.code }).toEqual({ status: 401, code: "unauthorized" });
  });
});
