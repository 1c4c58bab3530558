// The compiled binary signing in through an OpenID provider (oidc-provider, started here) that cannot be
// reached when svc starts: a warning at start, 503 oidc_provider_unavailable meanwhile, then, once the
// provider is up, the whole browser flow over HTTP with Node's fetch, ending in a cookie session.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startOidcProvider, type TestOidcProvider, visitProvider } from "../support/oidc-provider.ts";
import { waitUntil } from "../support/wait.ts";
import { freePort } from "../ports.ts";
import { emptyFolderWithBinary, prepareBinary, type Running, start, stop } from "./support/svc.ts";

const SECRET = "binary-oidc-client-secret-0123456789";
beforeAll(prepareBinary, 120_000);
let svc: Running | undefined;
let idp: TestOidcProvider | undefined;
afterAll(async () => {
  if (svc) await stop(svc);
  await idp?.stop();
});

test("a provider down at start: warned, 503 meanwhile, then a sign-in through it to a cookie session", async () => {
  const idpPort = freePort();
  const svcPort = freePort();
  const publicUrl = `http://127.0.0.1:${svcPort}`;
  const callback = `${publicUrl}/svc-api/v1/auth/oidc/corp/callback`;
  svc = await start(emptyFolderWithBinary(), {
    SVC_PORT: String(svcPort),
    SVC_PUBLIC_URL: publicUrl,
    SVC_OIDC_PROVIDERS: "corp",
    SVC_OIDC_CORP_ISSUER: `http://127.0.0.1:${idpPort}`,
    SVC_OIDC_CORP_CLIENT_ID: "svc",
    SVC_OIDC_CORP_CLIENT_SECRET: SECRET,
    SVC_OIDC_CORP_LABEL: "Corp SSO",
  });
  const running = svc;
  await waitUntil(() => running.output().includes('"OpenID provider not reached"'), { what: "the warning" });
  const warning = JSON.parse(
    running
      .output()
      .split("\n")
      .find((line) => line.includes("OpenID provider not reached"))!,
  );
  expect(warning).toMatchObject({ level: "warn", provider: "corp", issuer: `http://127.0.0.1:${idpPort}` });

  const early = await fetch(`${publicUrl}/svc-api/v1/auth/oidc/corp`, { redirect: "manual" });
  expect(early.status).toBe(503);
  expect((await early.json()).code).toBe("oidc_provider_unavailable");
  expect(early.headers.get("retry-after")).toBe("30");
  const listed = await (await fetch(`${publicUrl}/svc-api/v1/auth/oidc`)).json();
  expect(listed).toEqual({ providers: [{ name: "corp", label: "Corp SSO", url: "/svc-api/v1/auth/oidc/corp" }] });

  idp = await startOidcProvider([{ client_id: "svc", client_secret: SECRET, redirect_uris: [callback] }], idpPort);
  idp.account = { sub: "e2e-1", email: "dana@example.test", email_verified: true, preferred_username: "dana" };
  let started: Response | undefined;
  await waitUntil(
    async () => {
      started = await fetch(`${publicUrl}/svc-api/v1/auth/oidc/corp`, { redirect: "manual" });
      return started.status === 303;
    },
    { what: "the provider reached on a retry", timeoutMs: 30_000, everyMs: 250 },
  );
  const flow = started!.headers.getSetCookie()[0]!.split(";")[0]!;
  const answer = await visitProvider(new URL(started!.headers.get("location")!), callback);
  const back = await fetch(answer, { redirect: "manual", headers: { cookie: flow } });
  expect(back.status).toBe(303);
  expect(back.headers.get("location")).toBe(`${publicUrl}/svc/admin`);
  const session = back.headers.getSetCookie().find((cookie) => cookie.startsWith("svc_refresh="))!;
  const refreshed = await fetch(`${publicUrl}/svc-api/v1/auth/refresh`, {
    method: "POST",
    headers: { cookie: session.split(";")[0]!, origin: publicUrl, "content-type": "application/json" },
  });
  expect(refreshed.status).toBe(200);
  const { token } = (await refreshed.json()) as { token: string };
  const me = await (
    await fetch(`${publicUrl}/svc-api/v1/users/me`, { headers: { authorization: `Bearer ${token}` } })
  ).json();
  expect(me).toMatchObject({ username: "dana", email: "dana@example.test" });
  // Every line the binary wrote is one JSON object (oidc-provider runs in the test, not in svc).
  for (const line of running.output().trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
}, 60_000);
