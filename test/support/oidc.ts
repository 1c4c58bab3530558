// Signing in through a real OpenID provider (oidc-provider, started by the test) against an app in process:
// the provider, the app's configuration naming it, and a browser's round trip (svc's start, the provider's
// pages, svc's callback) with the cookies a browser would carry.
import { createOidcProviders, type OidcProviders } from "../../src/auth/oidc/providers.ts";
import type { OidcProviderConfig } from "../../src/config/index.ts";
import { createLoggers } from "../../src/observability/log.ts";
import type { Reply } from "../helpers.ts";
import { startOidcProvider, type TestOidcProvider, visitProvider } from "./oidc-provider.ts";

/** What tests' apps are reached at (testApp's requests go to http://localhost). */
export const PUBLIC_URL = "http://localhost";
export const CLIENT_SECRET = "svc-client-secret-0123456789abcdef";
export const callbackOf = (name: string) => `${PUBLIC_URL}/svc-api/v1/auth/oidc/${name}/callback`;

export interface TestIdp {
  idp: TestOidcProvider;
  providers: OidcProviders;
  settings: OidcProviderConfig;
  stop(): Promise<void>;
}

/** A provider named `name`, discovered already. */
export async function testIdp(name = "test"): Promise<TestIdp> {
  const idp = await startOidcProvider([
    { client_id: "svc", client_secret: CLIENT_SECRET, redirect_uris: [callbackOf(name)] },
  ]);
  const settings = {
    name,
    issuer: idp.issuer,
    clientId: "svc",
    clientSecret: CLIENT_SECRET,
    scopes: ["openid", "email", "profile"],
    label: "Test IdP",
  };
  const providers = createOidcProviders([settings], { logger: createLoggers("silent").logger });
  await providers.start();
  return {
    idp,
    providers,
    settings,
    async stop() {
      providers.stop();
      await idp.stop();
    },
  };
}

type Call = (
  method: string,
  path: string,
  options?: { headers?: Record<string, string>; token?: string },
) => Promise<Reply>;

/** The cookie a Set-Cookie header sets, as a Cookie header sends it ("name=value"). */
export const cookiePair = (setCookie: string) => setCookie.split(";")[0]!;

/**
 * A browser's round trip: svc's start (query as given), the provider's pages, then svc's callback carrying
 * the flow cookie. The callback's reply, with the start's for tests that look at it.
 */
export async function roundTrip(call: Call, name: string, query = "", cookie?: string) {
  const start = await call("GET", `/svc-api/v1/auth/oidc/${name}${query}`, cookie ? { headers: { cookie } } : {});
  if (start.status !== 303) return { start, callback: null };
  const flow = cookiePair(start.headers.getSetCookie()[0]!);
  const answer = await visitProvider(new URL(start.headers.get("location")!), callbackOf(name));
  const callback = await call("GET", `${answer.pathname}${answer.search}`, { headers: { cookie: flow } });
  return { start, callback, flow, answer };
}
