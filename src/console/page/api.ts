// The console is a client of svc like any other: @svc/client in cookie mode, on the page's own origin. The
// refresh token is in svc's HttpOnly cookie, which no script can read; the access token lives in memory only,
// shared with the page's other tabs (nothing goes to the page's storage). The client renews it (one refresh at a
// time across the tabs, bounded, on a timer while the page is open, and on a 401) and keeps a sign-out from being
// undone by a renewal on its way. What is left here: the administrator rule, the admin routes the client does not
// wrap (through its `request`), and the pages' ApiError.
import { startAuthentication } from "@simplewebauthn/browser";
import {
  type Answer as ClientAnswer,
  createClient,
  isSvcError,
  type MfaChallenge,
  type MfaProof,
  type Me,
  type Method,
  oidcSecondStep,
  type OidcProvider,
  type SignedIn,
} from "@svc/client";

export type { Me, MfaChallenge, OidcProvider };

const API = "/svc-api/v1";

/** The page's one client: its session is the console's. */
export const client = createClient({ mode: "cookie", keepAlive: true });

/** An answer that was not a success, as the API's problem details (or GraphQL's error) tell it. */
export class ApiError extends Error {
  constructor(
    readonly title: string,
    readonly detail: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(`${title}: ${detail}`);
  }
}

/** The client's SvcError as the pages show it; GraphQL's codes by name ("Conflict"), REST's by svc's title. */
function apiError(error: unknown): unknown {
  if (!isSvcError(error)) return error;
  if (error.graphqlCode !== null)
    return new ApiError(titleOf(error.graphqlCode), error.detail, error.status, error.graphqlCode);
  return new ApiError(error.title, error.detail, error.status, error.code);
}

/** Runs a call of the client's, its failure as the ApiError the pages show. */
export async function call<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw apiError(error);
  }
}

/** The administrator the console shows; null while it shows the sign-in. */
let shown: Me | null = null;
let onChange: (me: Me | null) => void = () => {};

const admin = (me: Me): Me | null => (me.role === "admin" ? me : null);

/**
 * Called when the session changes under the console: null when it is gone (refused refresh, signed out in
 * another tab), or another administrator when another tab signed in as them (the tabs share one cookie).
 */
export function whenSessionChanges(callback: (me: Me | null) => void): void {
  onChange = callback;
}

client.auth.onChange((session) => {
  // The console's own sign-in and sign-out say so themselves; renewals of the same account change nothing.
  if (!shown) return;
  const user = session?.user ?? null;
  const same = user !== null && user.id === shown.id && user.role === shown.role;
  shown = user && admin(user);
  if (!same) onChange(shown);
});

/**
 * Signs in with the password: the administrator, or the second step an account with a factor has to take
 * (secondStep). Only an administrator's session is kept.
 */
export async function signIn(username: string, password: string): Promise<Me | MfaChallenge> {
  const result = await call(() => client.auth.login({ username, password }));
  return result.mfaRequired ? result : kept(result);
}

/** Completes a sign-in's second step with a code, a recovery code, or the challenge's passkey. */
export async function secondStep(challenge: MfaChallenge, proof: MfaProof | "passkey"): Promise<Me> {
  const given =
    proof === "passkey" ? { webauthn: await startAuthentication({ optionsJSON: challenge.webauthn! }) } : proof;
  return kept(await call(() => client.auth.verifyMfa({ mfaToken: challenge.mfaToken, ...given })));
}

/** Signs in with a passkey alone: the browser asks which one, no username typed. */
export async function signInWithPasskey(): Promise<Me> {
  const options = await call(() => client.auth.passkeySignInOptions());
  const response = await startAuthentication({ optionsJSON: options });
  return kept(await call(() => client.auth.signInWithPasskey(response)));
}

/** The providers the sign-in page offers a button for; none when svc has none, or cannot say. */
export const providers = (): Promise<OidcProvider[]> => client.auth.providers().catch(() => []);

/** Leaves for svc's start of a sign-in at `provider`, which comes back to this page signed in. */
export const signInWith = (provider: string): void => void client.auth.signInWith(provider, { returnTo: here() });

/** This page's address, at `view` (#/account) when given. */
export const here = (view = ""): string => `${location.origin}${location.pathname}${view}`;

/** The second step a sign-in at a provider came back with (#mfa_token=…), until the sign-in page takes it. */
let arrived: MfaChallenge | null = null;

/** Takes that second step out of the address bar (and so out of the history): once, as the page loads. */
export function takeArrivedSecondStep(): void {
  arrived = oidcSecondStep(location.hash);
  if (arrived) history.replaceState(null, "", `${location.pathname}${location.search}`);
}

/** The second step taken as the page loaded, once: the next sign-in page shows the form again. */
export function arrivedSecondStep(): MfaChallenge | null {
  const taken = arrived;
  arrived = null;
  return taken;
}

/** The session just started, if it is an administrator's; else ended at once. */
async function kept({ user }: SignedIn): Promise<Me> {
  if (!admin(user)) {
    // Not kept: the session just started is ended at once, by the cookie it set (which svc clears).
    await client.auth.logout().catch(() => {});
    throw new ApiError(
      "Not an administrator",
      `${user.username} is not an administrator of this svc.`,
      403,
      "forbidden",
    );
  }
  shown = user;
  return user;
}

/** Resumes the session the cookie holds (after a reload, in a duplicated tab). null: none to resume. */
export async function resume(): Promise<Me | null> {
  const session = await call(() => client.auth.refresh());
  shown = session && admin(session.user);
  return shown;
}

/**
 * Ends this session on the server (its tokens stop working, svc clears the cookie), then here, in every tab.
 * By the cookie, which outlives the access token, after any renewal on its way (the client waits for it).
 */
export async function signOut(): Promise<void> {
  const was = shown;
  shown = null;
  try {
    await call(() => client.auth.logout());
  } catch (error) {
    // No answer: the session goes on, and signing out can be tried again.
    shown = client.auth.session ? was : null;
    throw error;
  }
}

export interface Answer<T> {
  body: T;
  /** The next page's URL, from the Link header. */
  next: string | null;
}

/** A call to the REST API (path under /svc-api/v1, or absolute); one refresh and retry on 401. */
export async function request<T = unknown>(method: Method, path: string, body?: unknown): Promise<Answer<T>> {
  const url = path.startsWith("/svc") ? path : `${API}${path}`;
  const answer: ClientAnswer<T> = await call(() => client.request<T>(method, url, { body }));
  return { body: (answer.status === 204 ? null : answer.body) as T, next: answer.next };
}

/** A GraphQL operation; its first error becomes an ApiError with the error's code. */
export function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  return call(() => client.graphql<T>(query, variables));
}

function titleOf(code: string): string {
  const titles: Record<string, string> = {
    BAD_USER_INPUT: "Invalid input",
    CONFLICT: "Conflict",
    FORBIDDEN: "Forbidden",
    NOT_FOUND: "Not found",
    UNAUTHENTICATED: "Signed out",
  };
  return titles[code] ?? "Error";
}

/** What asking for a reset link came to: sent (for every address alike), throttled, or mail off. */
export type ResetRequestOutcome = { kind: "sent" } | { kind: "throttled"; retryAfter: number } | { kind: "no_mail" };

/**
 * Asks svc to mail a reset link, through the client (no session: the call carries no token). svc answers
 * every address alike, and so does the page; a throttled request and mail that is off are said as such.
 */
export async function requestPasswordReset(email: string): Promise<ResetRequestOutcome> {
  try {
    await client.auth.requestPasswordReset({ email });
    return { kind: "sent" };
  } catch (error) {
    if (isSvcError(error, "too_many_requests")) return { kind: "throttled", retryAfter: error.retryAfter ?? 1 };
    if (isSvcError(error, "mail_not_configured")) return { kind: "no_mail" };
    throw apiError(error);
  }
}
