// @svc/client's optimistic concurrency on your own account against the app in process: users.me() keeps the
// record's ETag, update() and changePassword() send it as If-Match, and svc's 412 becomes MeChanged with the
// record read again. The routes' own rules are test/api/conditional.test.ts's.
import { describe, expect, test } from "bun:test";
import { MeChanged, SvcError } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { failure } from "../support/failure.ts";
import { clientOf } from "../support/in-process-client.ts";

/** ann, signed in through the client, and another writer on her account (a second tab, a phone). */
async function annTwice() {
  const app = await testApp();
  const ann = await app.signUp("ann");
  const client = clientOf(app);
  await client.auth.login({ username: "ann", password: ann.password });
  const elsewhere = (body: object) => app.call("PUT", "/svc-api/v1/users", { token: ann.token, body });
  return { app, ann, client, elsewhere };
}

describe("If-Match on your account", () => {
  test("me() keeps the ETag svc sent; update with ifMatch: true is held to it and keeps the new one", async () => {
    const { app, ann, client } = await annTwice();
    expect(client.users.etag).toBeNull();
    await client.users.me();
    const read = (await app.call("GET", "/svc-api/v1/users/me", { token: ann.token })).headers.get("etag");
    expect(client.users.etag).toBe(read!);
    const updated = await client.users.update({ username: "ann2" }, { ifMatch: true });
    expect(updated.username).toBe("ann2");
    const now = (await app.call("GET", "/svc-api/v1/users/me", { token: ann.token })).headers.get("etag");
    expect(client.users.etag).toBe(now!);
    expect(now).not.toBe(read);
    // The new tag holds the next write, without reading again.
    expect((await client.users.update({ username: "ann3" }, { ifMatch: true })).username).toBe("ann3");
  });

  test("a write elsewhere since: MeChanged (412) with the record as it stands, nothing written; then a retry lands", async () => {
    const { app, ann, client, elsewhere } = await annTwice();
    const seen = await client.users.me();
    const stale = client.users.etag;
    await elsewhere({ username: "annie" });
    const error = await failure<MeChanged>(client.users.update({ username: "ann2" }, { ifMatch: true }));
    expect(error).toBeInstanceOf(MeChanged);
    expect(error).toBeInstanceOf(SvcError);
    expect({ status: error!.status, code: error!.code }).toEqual({ status: 412, code: "precondition_failed" });
    expect(error!.current).toMatchObject({ id: seen.id, username: "annie" });
    expect(error!.currentEtag).not.toBe(stale);
    expect(error!.currentEtag).toBe(client.users.etag!);
    expect((await app.store.users.findById(ann.user.id))!.username).toBe("annie");
    // The client holds the version it read again: the retry is held to that one, and lands.
    expect((await client.users.update({ username: "ann2" }, { ifMatch: true })).username).toBe("ann2");
  });

  test("ifMatch as a string: the ETag given, kept by the app itself", async () => {
    const { client, elsewhere } = await annTwice();
    await client.users.me();
    const kept = client.users.etag!;
    expect((await client.users.update({ username: "ann2" }, { ifMatch: kept })).username).toBe("ann2");
    await elsewhere({ username: "annie" });
    const error = await failure<MeChanged>(client.users.update({ username: "ann3" }, { ifMatch: kept }));
    expect(error).toBeInstanceOf(MeChanged);
    expect(error!.current.username).toBe("annie");
  });

  test("without ifMatch a write is not held to any version (last write wins, as before)", async () => {
    const { client, elsewhere } = await annTwice();
    await client.users.me();
    await elsewhere({ username: "annie" });
    expect((await client.users.update({ username: "ann2" })).username).toBe("ann2");
  });

  test("changePassword with ifMatch: the current version lands; a stale one is MeChanged and the password stays", async () => {
    const { app, ann, client, elsewhere } = await annTwice();
    await client.users.me();
    await elsewhere({ username: "annie" });
    const change = { current_password: ann.password, new_password: "a brand new secret" };
    const error = await failure<MeChanged>(client.users.changePassword(change, { ifMatch: true }));
    expect(error).toBeInstanceOf(MeChanged);
    expect(error!.current.username).toBe("annie");
    const login = (password: string) =>
      app.call("POST", "/svc-api/v1/auth/login", { body: { username: "annie", password } });
    expect((await login(ann.password)).status).toBe(200);
    // MeChanged left the client the version it read again: the change is held to it, and lands.
    await client.users.changePassword(change, { ifMatch: true });
    expect((await login("a brand new secret")).status).toBe(200);
    expect((await client.users.me()).username).toBe("annie");
  });

  test("ifMatch: true before the record was read, or after a password change: a TypeError, nothing sent", async () => {
    const { ann, client } = await annTwice();
    expect(await failure(client.users.update({ username: "ann2" }, { ifMatch: true }))).toBeInstanceOf(TypeError);
    await client.users.me();
    await client.users.changePassword({ current_password: ann.password, new_password: "a brand new secret" });
    expect(client.users.etag).toBeNull();
    expect(await failure(client.users.update({ username: "ann2" }, { ifMatch: true }))).toBeInstanceOf(TypeError);
    expect((await client.users.me()).username).toBe("ann");
  });

  test("the ETag is the session user's: after signing in as another account it is not sent", async () => {
    const { app, client } = await annTwice();
    const bob = await app.signUp("bob");
    await client.users.me();
    await client.auth.logout();
    await client.auth.login({ username: "bob", password: bob.password });
    expect(client.users.etag).toBeNull();
    await client.users.me();
    expect(client.users.etag).not.toBeNull();
  });
});
