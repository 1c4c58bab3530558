// The session: who is signed in, the access token every call carries, and its renewal. One refresh at a
// time however many calls need one (single-flight here, a lock across clients and tabs), shortly before the
// token expires or when svc refuses it; the failed call is then sent again.
import { isSvcError } from "./errors.js";
import {
  type AuthOptions,
  dueForRenewal,
  type Held,
  heldFrom,
  type LoginAnswer,
  type LogoutScope,
  type Me,
  type ResetRedemption,
  type Session,
  type SessionMode,
  sessionOver,
  siteHolder,
  type TokenPair,
} from "./held-session.js";
import { answerOf, type Call, type Http } from "./http.js";
import { exclusive } from "./locks.js";
import {
  challengeOf,
  type LoginResult,
  type MfaProof,
  proofBody,
  type SecondStepAnswer,
  type SignedIn,
  type WebAuthnRequestOptions,
  type WebAuthnResponse,
} from "./mfa-types.js";
import { SessionKeeper } from "./session-keeper.js";

export type { AuthOptions, LogoutScope, Me, Session, SessionMode } from "./held-session.js";

const AUTH = "/svc-api/v1/auth";
const RENEW_TIMEOUT_MS = 30_000;
export class Auth {
  readonly #http: Http;
  readonly #mode: SessionMode;
  readonly #lockName: string;
  readonly #renewTimeoutMs: number;
  /** What the renewal lock is held on: the shared store, or (cookie mode: the browser's cookie) the site. */
  readonly #holder: object;
  readonly #kept: SessionKeeper;
  #renewal: Promise<string | null> | null = null;
  /** Resolves once the stored session has been read (at once for a synchronous store). */
  readonly ready: Promise<void>;

  constructor(http: Http, options: AuthOptions) {
    this.#http = http;
    this.#mode = options.mode;
    this.#renewTimeoutMs = options.renewTimeoutMs ?? RENEW_TIMEOUT_MS;
    this.#lockName = `svc-session:${http.baseUrl}:${options.storageKey}`;
    this.#holder = options.mode === "cookie" ? siteHolder(http.baseUrl) : options.storage;
    this.#kept = new SessionKeeper(
      options,
      this.#lockName,
      (held) => void this.#renew(held.token, true).catch(() => {}),
    );
    this.ready = this.#kept.ready;
  }

  /** Stops listening to the store and the other tabs; the session stays where it is kept. */
  close(): void {
    this.#kept.close();
  }

  get mode(): SessionMode {
    return this.#mode;
  }

  /** The signed-in user and the session's expiry, or null. */
  get session(): Session | null {
    return this.#kept.session;
  }

  /** Calls `listener` with the session whenever it starts, is renewed, changes user details, or ends (null). */
  onChange(listener: (session: Session | null) => void): () => void {
    return this.#kept.onChange(listener);
  }

  /**
   * Signs in with a password. For an account with a second factor the answer is `{ mfaRequired: true,
   * mfaToken, methods, webauthn? }` and no session yet: complete it with `verifyMfa`.
   */
  async login(credentials: { username: string; password: string }): Promise<LoginResult> {
    return this.#signedIn(await this.#post("login", { ...credentials, mode: this.#mode }));
  }

  /**
   * Completes a login's second step with exactly one proof: `{ code }` (the authenticator app's), `{
   * recoveryCode }`, or `{ webauthn }` (the browser's answer to the challenge's `webauthn` options). The
   * session starts in the mode the login was made in. invalid_mfa_code, invalid_passkey, invalid_mfa_token,
   * mfa_token_expired, too_many_requests.
   */
  async verifyMfa(input: { mfaToken: string } & MfaProof): Promise<SignedIn> {
    const { mfaToken, ...proof } = input;
    return this.#started(await this.#post<LoginAnswer>("mfa/verify", { mfa_token: mfaToken, ...proofBody(proof) }));
  }

  /** Options for signing in with a passkey alone (no username): pass them to `startAuthentication`. */
  async passkeySignInOptions(): Promise<WebAuthnRequestOptions> {
    return this.#post<WebAuthnRequestOptions>("passkeys/sign-in/options");
  }

  /** Signs in with the browser's answer to `passkeySignInOptions`, in this client's mode. invalid_passkey. */
  async signInWithPasskey(response: WebAuthnResponse): Promise<SignedIn> {
    return this.#started(await this.#post<LoginAnswer>("passkeys/sign-in", { response, mode: this.#mode }));
  }

  /** Redeems an administrator's reset code (or a mailed link's token): a new password and session; others end. */
  async redeemReset(input: ResetRedemption): Promise<LoginResult> {
    // An account with a second factor: the password is set, and the session waits for verifyMfa.
    return this.#signedIn(await this.#post("password-reset", { ...input, mode: this.#mode }));
  }

  /**
   * Trades the one-time code a sign-in through a provider ended with (mode=code: `return_to?code=…`) for a
   * session, once, within 60 seconds; answers as login does. A json-mode client's: svc answers the pair in
   * the body (a cookie-mode client signs in with mode=cookie instead). invalid_oidc_code, account_disabled.
   */
  async exchangeCode(code: string): Promise<LoginResult> {
    if (this.#mode !== "json") throw new TypeError("exchangeCode: for a json-mode client (cookie mode needs none)");
    return this.#signedIn(await this.#post("oidc/exchange", { code }));
  }

  /** A POST to auth/`route` without a token, its answer read. */
  async #post<T>(route: string, body?: object): Promise<T> {
    const call: Call = { method: "POST", path: `${AUTH}/${route}`, ...(body && { body }) };
    return answerOf<T>(await this.#http.send(call, null));
  }

  /** A sign-in by a secret: its second step (no session yet), or the session, kept. */
  async #signedIn(answer: LoginAnswer | SecondStepAnswer): Promise<LoginResult> {
    if ("mfa_required" in answer && answer.mfa_required) return challengeOf(answer);
    return this.#started(answer as LoginAnswer);
  }

  /** Keeps the session a sign-in answered. */
  async #started(answer: LoginAnswer): Promise<SignedIn> {
    await this.#kept.keep(heldFrom(answer, answer.user, this.#mode));
    this.#kept.restored = true;
    return { ...(this.session as Session), mfaRequired: false };
  }

  /**
   * Ends this session (local, the default), every other one (others), or all (global). Named by the refresh
   * token (json) or the cookie, so it works after the access token expired. A session svc already ended
   * ends here too; a network failure throws and keeps the session, so that signing out can be tried again.
   */
  async logout({ scope = "local" }: { scope?: LogoutScope } = {}): Promise<void> {
    await this.ready;
    // After any renewal on its way (here, in a client sharing the store, or another tab), with the
    // refresh token it leaves: the one held now may be spent, and svc's 401 for it would end nothing.
    return exclusive(this.#holder, this.#lockName, () => this.#logout(scope));
  }

  async #logout(scope: LogoutScope): Promise<void> {
    if (this.#mode === "json") await this.#kept.reload(true);
    const held = this.#kept.held;
    if (this.#mode === "json" && !held?.refreshToken) return this.#kept.end();
    const body = this.#mode === "json" ? { scope, refresh_token: held?.refreshToken } : { scope };
    const response = await this.#http.send({ method: "POST", path: `${AUTH}/logout`, body }, null);
    try {
      await answerOf<void>(response);
    } catch (error) {
      if (!(isSvcError(error) && error.status === 401)) throw error;
      return this.#kept.end();
    }
    if (scope !== "others") this.#kept.end();
  }

  /**
   * Renews the access token now. Returns the session, or null when there is none to renew (in cookie mode:
   * the way to find out, after a page load, whether the cookie still holds one; without a cookie svc answers
   * 204, so a signed-out page's console shows no failed request).
   */
  async refresh(): Promise<Session | null> {
    await this.ready;
    await this.#renew(this.#kept.held?.token ?? null, true);
    return this.session;
  }

  /** The token a call should carry: renewed first when it is about to expire; null when signed out. */
  async token(): Promise<string | null> {
    await this.ready;
    // Signed out here: another client sharing the store may have signed in since (a store without notices).
    if (!this.#kept.held) await this.#kept.reload(true);
    const held = this.#kept.held;
    if (held && !dueForRenewal(held)) return held.token;
    if (!held && (this.#mode === "json" || this.#kept.restored)) return null;
    return this.#renew(held?.token ?? null, false);
  }

  /**
   * @internal The client's own calls go through here (client.request is the public way to call any route).
   * Sends a call with the session's token; when svc refuses the token (401 with its Bearer challenge),
   * renews it once and sends the call again (a new request with the same body). Another 401 (a wrong
   * second-factor code) is the answer: sent again, one wrong code would count twice against the account.
   */
  async authorized(call: Call): Promise<Response> {
    const token = await this.token();
    const response = await this.#http.send(call, token);
    if (response.status !== 401 || token === null || !response.headers.has("www-authenticate")) return response;
    const renewed = await this.#renew(token, false);
    if (renewed === null) return response;
    await response.body?.cancel().catch(() => {});
    return this.#http.send(call, renewed);
  }

  /**
   * @internal For the client's subscriptions: a new token after `failed` was refused (the same as
   * authorized's), or null when the session is over.
   */
  renewAfter(failed: string | null): Promise<string | null> {
    return this.#renew(failed, false);
  }

  /** @internal The session's user changed (users.update, a verified address): keeps the new details. */
  updated(user: Me): void {
    const held = this.#kept.held;
    if (held && held.user.id === user.id) void this.#kept.keep({ ...held, user });
  }

  /** @internal A password change answers a new pair for this session. */
  async renewed(pair: TokenPair): Promise<void> {
    await this.ready;
    // After any renewal on its way, whose older pair would otherwise land on top of this one.
    return exclusive(this.#holder, this.#lockName, async () => {
      if (this.#mode === "json") await this.#kept.reload(true);
      const held = this.#kept.held;
      if (held) await this.#kept.keep(heldFrom(pair, held.user, this.#mode));
    });
  }

  /** @internal The account is gone, or the session ended by other means (users.delete): forget it. */
  async ended(): Promise<void> {
    await this.ready;
    // After any renewal on its way, so that the pair it brings back cannot revive the session.
    return exclusive(this.#holder, this.#lockName, () => this.#kept.end());
  }

  /**
   * One renewal for every caller at once. Under the lock, the shared store is read again: when another
   * client or tab renewed the session meanwhile (its token is not `stale` and not due), that token is
   * taken instead of renewing again, which would spend the same refresh token twice.
   */
  #renew(stale: string | null, force: boolean): Promise<string | null> {
    this.#renewal ??= exclusive(this.#holder, this.#lockName, async () => {
      if (this.#mode === "json") await this.#kept.reload(true);
      const held = this.#kept.held;
      if (!force && held && held.token !== stale && !dueForRenewal(held)) return held.token;
      if (this.#mode === "json" && !held?.refreshToken) return null;
      return this.#refresh(held);
    }).finally(() => {
      this.#renewal = null;
    });
    return this.#renewal;
  }

  async #refresh(held: Held | null): Promise<string | null> {
    // Cookie mode: svc answers 204 when the browser sent no cookie, so a signed-out page load logs no error.
    const body = this.#mode === "json" ? { refresh_token: held?.refreshToken } : { mode: "cookie" };
    // Bounded: a renewal holds the lock every client and tab of the session waits on.
    const signal = AbortSignal.timeout(this.#renewTimeoutMs);
    const generation = this.#kept.generation;
    const response = await this.#http.send({ method: "POST", path: `${AUTH}/refresh`, body, signal }, null);
    try {
      const answer = await answerOf<LoginAnswer | undefined>(response);
      // 204: the browser holds no session cookie.
      if (answer === undefined) return this.#noSession();
      // Ended meanwhile (by a path outside the lock, or another tab's news): the end stands.
      if (generation !== this.#kept.generation) return null;
      this.#kept.restored = true;
      await this.#kept.keep(heldFrom(answer, answer.user, this.#mode));
      return answer.token;
    } catch (error) {
      // A definitive answer (in cookie mode: the cookie holds no session); anything else is left for the next try.
      if (sessionOver(error)) return this.#noSession();
      throw error;
    }
  }

  /** svc's definitive word that there is no session: signed out, and known to be. */
  async #noSession(): Promise<null> {
    this.#kept.restored = true;
    await this.#kept.end();
    return null;
  }
}
