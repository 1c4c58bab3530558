// OpenID providers from configuration (SVC_OIDC_*): what a bad setting says, and discovery against a real
// provider started here: reached at start, unreachable at start then reached on a retry, refreshes that
// fail keeping what was read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as client from "openid-client";
import { createOidcProviders } from "../src/auth/oidc/providers.ts";
import { ConfigError } from "../src/config/index.ts";
import { oidc } from "../src/config/oidc.ts";
import { createLoggers } from "../src/observability/log.ts";
import { startOidcProvider, type TestOidcProvider } from "./support/oidc-provider.ts";
import { waitUntil } from "./support/wait.ts";
import { freePort } from "./ports.ts";

const base = {
  SVC_OIDC_PROVIDERS: "keycloak",
  SVC_OIDC_KEYCLOAK_ISSUER: "https://sso.example.com/realms/main",
  SVC_OIDC_KEYCLOAK_CLIENT_ID: "svc",
  SVC_OIDC_KEYCLOAK_CLIENT_SECRET: "secret",
};

function refusal(env: Record<string, string>): string {
  try {
    oidc(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("accepted");
}

describe("SVC_OIDC_* settings", () => {
  test("a provider with its defaults", () => {
    expect(oidc(base)).toEqual({
      providers: [
        {
          name: "keycloak",
          issuer: "https://sso.example.com/realms/main",
          clientId: "svc",
          clientSecret: "secret",
          scopes: ["openid", "email", "profile"],
          label: "Keycloak",
        },
      ],
      returnUrls: [],
    });
    expect(oidc({})).toEqual({ providers: [], returnUrls: [] });
  });

  test("scopes always hold openid; the label is taken as given", () => {
    const config = oidc({ ...base, SVC_OIDC_KEYCLOAK_SCOPES: "email groups", SVC_OIDC_KEYCLOAK_LABEL: "Company SSO" });
    expect(config.providers[0]).toMatchObject({ scopes: ["openid", "email", "groups"], label: "Company SSO" });
  });

  test("hyphenated names read underscored variables", () => {
    const config = oidc({
      SVC_OIDC_PROVIDERS: "google,entra-id",
      SVC_OIDC_GOOGLE_ISSUER: "https://accounts.google.com",
      SVC_OIDC_GOOGLE_CLIENT_ID: "g",
      SVC_OIDC_GOOGLE_CLIENT_SECRET: "gs",
      SVC_OIDC_ENTRA_ID_ISSUER: "https://login.microsoftonline.com/tenant/v2.0",
      SVC_OIDC_ENTRA_ID_CLIENT_ID: "e",
      SVC_OIDC_ENTRA_ID_CLIENT_SECRET: "es",
    });
    expect(config.providers.map((p) => p.name)).toEqual(["google", "entra-id"]);
  });

  test.each([
    [{ SVC_OIDC_PROVIDERS: "Google" }, "SVC_OIDC_PROVIDERS: names providers"],
    [{ ...base, SVC_OIDC_PROVIDERS: "keycloak,keycloak" }, "SVC_OIDC_PROVIDERS: names keycloak twice"],
    [{ ...base, SVC_OIDC_KEYCLOAK_ISSUER: "" }, "SVC_OIDC_KEYCLOAK_ISSUER: is required for the provider keycloak"],
    [{ ...base, SVC_OIDC_KEYCLOAK_CLIENT_ID: "" }, "SVC_OIDC_KEYCLOAK_CLIENT_ID: is required"],
    [{ ...base, SVC_OIDC_KEYCLOAK_CLIENT_SECRET: " " }, "SVC_OIDC_KEYCLOAK_CLIENT_SECRET: is required"],
    [{ ...base, SVC_OIDC_KEYCLOAK_ISSUER: "sso.example.com" }, "SVC_OIDC_KEYCLOAK_ISSUER: must be a URL"],
    [
      { ...base, SVC_OIDC_KEYCLOAK_ISSUER: "http://sso.example.com" },
      "SVC_OIDC_KEYCLOAK_ISSUER: must be an https:// URL",
    ],
    [{ ...base, SVC_OIDC_KEYCLOAK_ISSUER: "https://sso.example.com/?a=1" }, "must not carry a query"],
    [{ ...base, SVC_OIDC_KEYCLOAK_SCOPES: 'openid "email"' }, "SVC_OIDC_KEYCLOAK_SCOPES: must be scopes"],
    [{ ...base, SVC_OIDC_RETURN_URLS: "/relative" }, "SVC_OIDC_RETURN_URLS: must list absolute URLs"],
    [{ ...base, SVC_OIDC_RETURN_URLS: "javascript:alert(1)" }, "SVC_OIDC_RETURN_URLS: must not list a javascript: URL"],
    [{ ...base, SVC_OIDC_RETURN_URLS: "http://app.example.com/in" }, "SVC_OIDC_RETURN_URLS: must list https:// URLs"],
    [{ ...base, SVC_OIDC_RETURN_URLS: "https://app.example.com/in#x" }, "without a query, a fragment"],
  ])("refused: %p", (env, message) => {
    expect(refusal(env)).toContain(message);
  });

  test("return URLs: https, loopback http and native apps' own schemes", () => {
    const config = oidc({
      ...base,
      SVC_OIDC_RETURN_URLS: "https://app.example.com/signed-in, http://127.0.0.1:5173/in,com.example.app:/oauth",
    });
    expect(config.returnUrls).toEqual([
      "https://app.example.com/signed-in",
      "http://127.0.0.1:5173/in",
      "com.example.app:/oauth",
    ]);
  });
});

describe("discovery against a real provider", () => {
  const clientConfig = {
    client_id: "svc",
    client_secret: "svc-client-secret-0123456789",
    redirect_uris: ["http://127.0.0.1:1/cb"],
  };
  let idp: TestOidcProvider;
  const { logger } = createLoggers("silent");
  const settings = (issuer: string) => [
    {
      name: "test",
      issuer,
      clientId: "svc",
      clientSecret: clientConfig.client_secret,
      scopes: ["openid"],
      label: "Test",
    },
  ];

  beforeAll(async () => {
    idp = await startOidcProvider([clientConfig]);
  });
  afterAll(() => idp.stop());

  test("a provider reached at start is ready, with its endpoints", async () => {
    const providers = createOidcProviders(settings(idp.issuer), { logger });
    await providers.start();
    const state = providers.state("test");
    providers.stop();
    expect(state?.kind).toBe("ready");
    if (state?.kind !== "ready") return;
    expect(state.configuration.serverMetadata().issuer).toBe(idp.issuer);
    expect(state.configuration.serverMetadata().authorization_endpoint).toBe(`${idp.issuer}/auth`);
    expect(providers.state("other")).toBeUndefined();
  });

  test("a provider unreachable at start is unavailable, then ready once a retry reaches it", async () => {
    const port = freePort();
    const providers = createOidcProviders(settings(`http://127.0.0.1:${port}`), { logger, retrySeconds: 0.05 });
    await providers.start();
    expect(providers.state("test")).toMatchObject({ kind: "unavailable" });
    const late = await startOidcProvider([clientConfig], port);
    try {
      // Retries run on their own timers: there is no event to wait on.
      await waitUntil(() => providers.state("test")?.kind === "ready", { what: "the provider reached on a retry" });
      expect(providers.state("test")?.kind).toBe("ready");
    } finally {
      providers.stop();
      await late.stop();
    }
  });

  test("the discovered configuration completes a code flow's first step (an authorization URL with PKCE)", async () => {
    const providers = createOidcProviders(settings(idp.issuer), { logger });
    await providers.start();
    providers.stop();
    const state = providers.state("test");
    if (state?.kind !== "ready") throw new Error("not ready");
    const url = client.buildAuthorizationUrl(state.configuration, {
      redirect_uri: clientConfig.redirect_uris[0]!,
      scope: "openid",
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: "S256",
      state: client.randomState(),
    });
    const answer = await fetch(url, { redirect: "manual" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toStartWith("/interaction/");
  });
});
