// One sign-in at a real OpenID provider (oidc-provider, started here) through svc's flow module: the
// authorization URL's checks (PKCE S256, state, nonce) sealed for the cookie, and the callback's refusals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type * as client from "openid-client";
import { beginFlow, completeFlow, type FlowIntent, OidcFlowError, openFlow } from "../src/auth/oidc/flow.ts";
import { createOidcProviders, type ProviderKeys } from "../src/auth/oidc/providers.ts";
import { createLoggers } from "../src/observability/log.ts";
import { startOidcProvider, type TestOidcProvider, unpublishedKey, visitProvider } from "./support/oidc-provider.ts";

const SECRET = "test-secret-for-the-flow-cookie-0123456789";
const REDIRECT = "http://127.0.0.1:9/svc-api/v1/auth/oidc/test/callback";
const intent: FlowIntent = { mode: "cookie", returnTo: "http://127.0.0.1:9/console/" };
const registered = { client_id: "svc", client_secret: "svc-client-secret-0123456789", redirect_uris: [REDIRECT] };

let idp: TestOidcProvider;
let configuration: client.Configuration;
let ready: { configuration: client.Configuration; keys: ProviderKeys };

beforeAll(async () => {
  idp = await startOidcProvider([registered]);
  const providers = createOidcProviders(
    [
      {
        name: "test",
        issuer: idp.issuer,
        clientId: "svc",
        clientSecret: registered.client_secret,
        scopes: ["openid", "email", "profile"],
        label: "Test",
      },
    ],
    { logger: createLoggers("silent").logger },
  );
  await providers.start();
  providers.stop();
  const state = providers.state("test");
  if (state?.kind !== "ready") throw new Error("provider not discovered");
  configuration = state.configuration;
  ready = state;
});
afterAll(() => idp.stop());

async function begin(now?: number) {
  return beginFlow(
    configuration,
    {
      provider: "test",
      scopes: ["openid", "email", "profile"],
      redirectUri: REDIRECT,
      secret: SECRET,
      ...(now !== undefined && { now }),
    },
    intent,
  );
}

async function refusal(run: () => Promise<unknown>): Promise<[string, string]> {
  try {
    await run();
  } catch (error) {
    if (error instanceof OidcFlowError) return [error.reason, error.detail];
    throw error;
  }
  throw new Error("not refused");
}

describe("the code flow against a real provider", () => {
  test("the authorization URL asks for the code with PKCE S256, state and nonce, and the cookie hides them", async () => {
    const { url, sealed } = await begin();
    expect(url.origin + url.pathname).toBe(`${idp.issuer}/auth`);
    const params = url.searchParams;
    expect(params.get("response_type")).toBe("code");
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("redirect_uri")).toBe(REDIRECT);
    const flow = await openFlow(sealed, "test", SECRET);
    expect(params.get("state")).toBe(flow.state);
    expect(params.get("nonce")).toBe(flow.nonce);
    expect(params.get("code_challenge")).not.toBe(flow.verifier);
    for (const value of [flow.verifier, flow.state, flow.nonce]) expect(sealed).not.toContain(value);
  });

  test("a sign-in ends with the identity the provider vouches for", async () => {
    idp.account = {
      sub: "sub-1",
      email: "Ada@Example.test",
      email_verified: true,
      preferred_username: "ada",
      name: "Ada L",
    };
    const { url, sealed } = await begin();
    const callback = await visitProvider(url, REDIRECT);
    expect(callback.searchParams.get("iss")).toBe(idp.issuer);
    const identity = await completeFlow(ready, callback, await openFlow(sealed, "test", SECRET));
    expect(identity).toEqual({
      issuer: idp.issuer,
      subject: "sub-1",
      email: "Ada@Example.test",
      emailVerified: true,
      preferredUsername: "ada",
      name: "Ada L",
    });
  });

  test("an address the provider has not verified is not taken as verified", async () => {
    idp.account = { sub: "sub-2", email: "bo@example.test", email_verified: false };
    const { url, sealed } = await begin();
    const identity = await completeFlow(
      ready,
      await visitProvider(url, REDIRECT),
      await openFlow(sealed, "test", SECRET),
    );
    expect(identity).toMatchObject({ subject: "sub-2", emailVerified: false, preferredUsername: null });
  });

  test("a replayed callback is refused: the code was spent", async () => {
    idp.account = { sub: "sub-3" };
    const { url, sealed } = await begin();
    const callback = await visitProvider(url, REDIRECT);
    const flow = await openFlow(sealed, "test", SECRET);
    await completeFlow(ready, callback, flow);
    const [reason, detail] = await refusal(() => completeFlow(ready, callback, flow));
    expect(reason).toBe("invalid_response");
    expect(detail).toContain("invalid_grant");
  });

  test("a callback with another flow's state is refused", async () => {
    idp.account = { sub: "sub-4" };
    const mine = await begin();
    const theirs = await begin();
    const callback = await visitProvider(theirs.url, REDIRECT);
    const [reason] = await refusal(async () =>
      completeFlow(ready, callback, await openFlow(mine.sealed, "test", SECRET)),
    );
    expect(reason).toBe("state_mismatch");
  });

  test("an ID token whose nonce is not the flow's is refused", async () => {
    idp.account = { sub: "sub-5" };
    const { url, sealed } = await begin();
    const callback = await visitProvider(url, REDIRECT);
    const flow = await openFlow(sealed, "test", SECRET);
    const [reason, detail] = await refusal(() => completeFlow(ready, callback, { ...flow, nonce: "another-nonce" }));
    expect(reason).toBe("invalid_response");
    expect(detail).toContain("nonce");
  });

  test("a user who cancels at the provider ends in provider_error access_denied", async () => {
    idp.account = null;
    const { url, sealed } = await begin();
    const callback = await visitProvider(url, REDIRECT);
    expect(callback.searchParams.get("error")).toBe("access_denied");
    const [reason, detail] = await refusal(async () =>
      completeFlow(ready, callback, await openFlow(sealed, "test", SECRET)),
    );
    expect(reason).toBe("provider_error");
    expect(detail).toStartWith("access_denied");
  });

  test("the flow's cookie: missing, altered, another provider's, expired", async () => {
    const { sealed } = await begin();
    expect((await refusal(() => openFlow(undefined, "test", SECRET)))[0]).toBe("flow_expired");
    // A character in the middle: the last one of base64url may carry only padding bits.
    const middle = Math.floor(sealed.length / 2);
    const altered = `${sealed.slice(0, middle)}${sealed[middle] === "A" ? "B" : "A"}${sealed.slice(middle + 1)}`;
    expect((await refusal(() => openFlow(altered, "test", SECRET)))[0]).toBe("flow_expired");
    expect((await refusal(() => openFlow(sealed, "test", "another-secret-0123456789")))[0]).toBe("flow_expired");
    expect((await refusal(() => openFlow(sealed, "other", SECRET)))[1]).toContain("with test");
    const old = await begin(Date.now() - 601_000);
    expect((await refusal(() => openFlow(old.sealed, "test", SECRET)))[1]).toContain("took too long");
  });
});

describe("ID tokens the flow refuses (re-signed on their way from the provider's token endpoint)", () => {
  async function signInWith(edit: NonNullable<TestOidcProvider["idTokenEdit"]>) {
    idp.account = { sub: "sub-edit", email: "e@example.test", email_verified: true };
    const { url, sealed } = await begin();
    const callback = await visitProvider(url, REDIRECT);
    idp.idTokenEdit = edit;
    try {
      return await refusal(async () => completeFlow(ready, callback, await openFlow(sealed, "test", SECRET)));
    } finally {
      idp.idTokenEdit = null;
    }
  }

  test("unchanged but re-signed with the provider's key, it passes (the edit itself breaks nothing)", async () => {
    idp.account = { sub: "sub-same" };
    const { url, sealed } = await begin();
    const callback = await visitProvider(url, REDIRECT);
    idp.idTokenEdit = {};
    try {
      const identity = await completeFlow(ready, callback, await openFlow(sealed, "test", SECRET));
      expect(identity.subject).toBe("sub-same");
    } finally {
      idp.idTokenEdit = null;
    }
  });

  test("from another issuer", async () => {
    const [reason, detail] = await signInWith({ claims: { iss: "https://evil.example.test" } });
    expect([reason, detail]).toEqual(["invalid_response", 'unexpected JWT "iss" (issuer) claim value']);
  });

  test("for another audience", async () => {
    const [reason, detail] = await signInWith({ claims: { aud: "another-client" } });
    expect([reason, detail]).toEqual(["invalid_response", 'unexpected JWT "aud" (audience) claim value']);
  });

  test("expired", async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    const [reason, detail] = await signInWith({ claims: { iat: past - 600, exp: past } });
    expect(reason).toBe("invalid_response");
    expect(detail).toContain('"exp"');
  });

  test("signed with a key the provider never published", async () => {
    const [reason, detail] = await signInWith({ key: await unpublishedKey() });
    expect(reason).toBe("invalid_response");
    expect(detail).toContain("the ID token's signature: no applicable key found");
  });

  test("the provider rotates its keys: its new key is trusted at once, the key it rotated away no more", async () => {
    const [old] = idp.signingKeys();
    await idp.rotateKeys();
    idp.account = { sub: "sub-rotated" };
    const { url, sealed } = await begin();
    const identity = await completeFlow(
      ready,
      await visitProvider(url, REDIRECT),
      await openFlow(sealed, "test", SECRET),
    );
    expect(identity.subject).toBe("sub-rotated");
    const [reason, detail] = await signInWith({ key: old! });
    expect(reason).toBe("invalid_response");
    expect(detail).toContain("no applicable key found");
  });
});
