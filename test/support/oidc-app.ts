// An app that signs in through the test's OpenID provider, on a clock the test moves, with the steps of a
// browser's round trip apart (so a test can change the provider's answer, or the callback, between them)
// and what the refusal tests look at after each: the audit trail, the log, what was written.
import { expect } from "bun:test";
import { TOTP, URI } from "otpauth";
import { type AuditAction, auditEvent, CLI_ORIGIN } from "../../src/audit/model.ts";
import { ManualClock } from "../backup-clock.ts";
import { type ConfigOverrides, type Reply, testApp, testConfig, type TestAppOptions } from "../helpers.ts";
import { callbackOf, cookiePair, PUBLIC_URL, type TestIdp } from "./oidc.ts";
import { visitProvider } from "./oidc-provider.ts";

/** The app-side URL SVC_OIDC_RETURN_URLS lists in these tests. */
export const APP_RETURN = "https://app.example.com/signed-in";
export const OIDC = "/svc-api/v1/auth/oidc";

export async function oidcApp(
  { idp, settings, providers }: TestIdp,
  config: ConfigOverrides = {},
  {
    providers: given = providers,
    ...options
  }: Omit<TestAppOptions, "config" | "oidcProviders" | "clock"> & {
    /** Other providers than the test's (one not reached, say). */
    providers?: TestIdp["providers"];
  } = {},
) {
  const clock = new ManualClock(Date.now());
  const base = testConfig();
  const app = await testApp({
    ...options,
    clock,
    oidcProviders: given,
    config: {
      oidc: { providers: [settings], returnUrls: [APP_RETURN] },
      ...config,
      mail: { ...base.mail, publicUrl: PUBLIC_URL, ...config.mail },
    },
  });
  const name = settings.name;

  /**
   * svc's start, then the provider's pages: the flow cookie and the callback's path, not yet followed.
   * `cookie`: what the browser sends svc at the start (its session cookie, for a link).
   */
  async function begin(query = "", provider = name, cookie?: string) {
    const start = await app.call("GET", `${OIDC}/${provider}${query}`, cookie ? { headers: { cookie } } : {});
    expect(start.status).toBe(303);
    const flow = cookiePair(start.headers.getSetCookie()[0]!);
    const answer = await visitProvider(new URL(start.headers.get("location")!), callbackOf(provider));
    return { flow, callback: `${answer.pathname}${answer.search}`, answer };
  }

  /** svc's callback, with the flow's cookie when given. */
  const finish = (callback: string, flow?: string) =>
    app.call("GET", callback, { headers: flow === undefined ? {} : { cookie: flow } });

  /** A whole round trip; the callback's reply. */
  async function signIn(query = "", provider = name, cookie?: string) {
    const { flow, callback } = await begin(query, provider, cookie);
    return finish(callback, flow);
  }

  /** Signs up `username` and logs in in cookie mode: its Bearer and the session cookie a browser holds. */
  async function cookieSession(username: string) {
    const user = await app.signUp(username);
    const login = await app.call("POST", "/svc-api/v1/auth/login", {
      headers: { origin: PUBLIC_URL },
      body: { username, password: user.password, mode: "cookie" },
    });
    expect(login.status).toBe(200);
    return { ...user, token: login.body.token as string, cookie: sessionCookie(login)! };
  }

  /** The audit events with this action, newest first. */
  const audits = (action: AuditAction) => app.store.audit.list({ action, limit: 100 });

  /** The session cookie a signed-in callback set ("svc_refresh=…"), as a Cookie header sends it. */
  const sessionCookie = (reply: Reply) => {
    const set = reply.headers.getSetCookie().find((c) => c.startsWith("svc_refresh="));
    return set === undefined ? null : cookiePair(set);
  };

  /** A Bearer for a cookie session: the refresh its cookie allows. */
  async function tokenOf(reply: Reply): Promise<string> {
    const cookie = sessionCookie(reply);
    expect(cookie).not.toBeNull();
    const refreshed = await app.call("POST", "/svc-api/v1/auth/refresh", {
      headers: { cookie: cookie!, origin: PUBLIC_URL, "content-type": "application/json" },
    });
    expect(refreshed.status).toBe(200);
    return refreshed.body.token as string;
  }

  /** Marks the user's address verified, as an administrator would. */
  async function verify(userId: string) {
    const at = new Date(clock.now()).toISOString();
    await app.store.emailVerifications.mark(
      userId,
      at,
      auditEvent("email_verification.marked", { target: userId, origin: CLI_ORIGIN }, at),
    );
  }

  /** Turns an authenticator app on for the token's user; the TOTP that makes its codes. */
  async function enrolTotp(token: string): Promise<TOTP> {
    const enrolment = await app.call("POST", "/svc-api/v1/auth/mfa/totp", { token });
    expect(enrolment.status).toBe(201);
    const totp = URI.parse(enrolment.body.otpauth_uri) as TOTP;
    const confirmed = await app.call("POST", "/svc-api/v1/auth/mfa/totp/confirm", {
      token,
      body: { code: totp.generate({ timestamp: clock.now() }) },
    });
    expect(confirmed.status).toBe(200);
    // The confirming code's step is spent: the next code comes from the next one.
    clock.pass(30_000);
    return totp;
  }

  return {
    ...app,
    ...{ clock, idp, name, begin, finish, signIn, audits, sessionCookie, tokenOf, verify, enrolTotp, cookieSession },
  };
}

export type OidcApp = Awaited<ReturnType<typeof oidcApp>>;

/** Asserts the failure page: the catalogue's status, the code in it, no stack trace, the flow cookie ended. */
export function expectFailurePage(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, type: reply.headers.get("content-type") }).toEqual({
    status,
    type: "text/html; charset=utf-8",
  });
  expect(reply.text).toContain(`<code>${code}</code>`);
  expect(reply.text).not.toMatch(/\bat .+\(.*:\d+:\d+\)|Error:|node_modules|src\//);
  expect(reply.headers.getSetCookie().some((c) => c.startsWith("svc_oidc=;") && c.includes("Max-Age=0"))).toBe(true);
}
