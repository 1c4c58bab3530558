// Second factors in domain terms (docs/second-factors.md): enrolling and removing an authenticator app,
// recovery codes, what a user has on, a login's second step and a session's step-up. Knows nothing of
// HTTP; throws AppError. Every factor check counts against the account's login throttle as a password
// guess does, and is audited and counted (svc_mfa_verifications_total).
import { auditEvent, type AuditAction, type Origin } from "../../audit/model.ts";
import type { AuditEvent, AuditStore, FactorSummary, MfaStore, UserRecord, UserStore } from "../../db/store.ts";
import { MFA_TOKEN_FAILURES } from "../../db/mfa-challenges.ts";
import { AppError } from "../../errors/index.ts";
import { limitKey } from "../../lib/limit-key.ts";
import type { Logger } from "../../observability/log.ts";
import type { MfaMethod, MfaVerificationCounter } from "../../observability/metrics.ts";
import { userView, type UserView } from "../../users/model.ts";
import type { PasswordHasher } from "../passwords.ts";
import { newRefreshToken, refreshDigest } from "../refresh-tokens.ts";
import type { ClientInfo, SessionService, TokenPair } from "../sessions.ts";
import type { LoginThrottle } from "../throttle.ts";
import type { VerifiedToken } from "../tokens.ts";
import type { PasskeyFactor } from "./contracts.ts";
import { createStepUpGuard, hasFactor, STEP_UP_SECONDS } from "./step-up.ts";
import {
  shownFactor,
  type MfaChallenge,
  type MfaStatus,
  type RemoveTotpInput,
  type ShownFactor,
  type StepUp,
  type TotpEnrolment,
  type VerifyInput,
} from "./model.ts";
import { canonicalRecoveryCode, newRecoveryCodes, recoveryDigest } from "./recovery-codes.ts";
import { matchingStep, newTotpSecret, openTotpSecret, otpauthUri, qrSvg, sealTotpSecret } from "./totp.ts";

/** How long a login's mfa_token lives. */
export const MFA_TOKEN_TTL_SECONDS = 300;

/** RFC 8176's names for what each method proves ("rec" is svc's own, for a recovery code). */
const AMR: Record<MfaMethod, string> = { totp: "otp", recovery_code: "rec", webauthn: "hwk" };

export interface SecondFactorDeps {
  store: MfaStore;
  users: UserStore;
  audit: AuditStore;
  passwords: PasswordHasher;
  sessions: SessionService;
  throttle: LoginThrottle;
  logger: Logger;
  /** SVC_JWT_SECRET: the apps' secrets are sealed under it. */
  secret: Uint8Array;
  /** The otpauth URI's issuer: what the app lists the account under (SVC_MAIL_PRODUCT_NAME). */
  issuer: string;
  /** The passkey code's side of a second step; without it, passkeys are not offered. */
  passkeys?: PasskeyFactor;
  /** svc_mfa_verifications_total, where there are metrics (not in the CLI). */
  counted?: MfaVerificationCounter;
  now?: () => number;
}

export type SecondFactors = ReturnType<typeof createSecondFactors>;

const mfaTokenDigest = (token: string) => refreshDigest(`mfa:${token}`);
/** A step-up's passkey challenge is kept as a second step of its own, named by the session. */
const stepUpDigest = (sessionId: string) => refreshDigest(`step-up:${sessionId}`);

const invalidCode = () =>
  new AppError("invalid_mfa_code", "The code is wrong, was used already, or the recovery code is spent.");
const invalidPasskey = () => new AppError("invalid_passkey", "The passkey's answer was not accepted.");
const invalidToken = () =>
  new AppError("invalid_mfa_token", "The mfa_token is unknown, used, or spent by wrong codes: log in again.");
const notEnabled = (detail: string) => new AppError("mfa_not_enabled", detail);

export function createSecondFactors({
  store,
  users,
  audit,
  passwords,
  sessions,
  throttle,
  logger,
  secret,
  issuer,
  passkeys,
  counted = () => {},
  now = Date.now,
}: SecondFactorDeps) {
  const iso = (ms: number) => new Date(ms).toISOString();
  // The CLI's origin has no address; every request's has.
  const clientKey = (client: Origin) => `client:${limitKey(client.address ?? "cli")}`;

  /** An event that goes with no change of its own: its write failing must not change the answer. */
  async function note(event: AuditEvent): Promise<void> {
    try {
      await audit.record(event);
    } catch (error) {
      logger.warn({ err: error, audit: event }, "audit event not recorded");
    }
  }

  const event = (action: AuditAction, user: UserRecord, origin: Origin, detail?: Record<string, unknown>) =>
    auditEvent(action, { actor: user.id, target: user.id, origin, ...(detail && { detail }) });

  /** What a login's second step accepts for these factors. */
  function methodsOf(factors: FactorSummary): MfaMethod[] {
    const methods: MfaMethod[] = [];
    if (factors.totp?.confirmedAt) methods.push("totp");
    if (factors.recoveryCodesLeft > 0 && hasFactor(factors)) methods.push("recovery_code");
    if (factors.passkeys > 0 && passkeys) methods.push("webauthn");
    return methods;
  }

  async function appSecret(userId: string, confirmed: boolean): Promise<{ base32: string; sealed: string } | null> {
    const row = await store.totp(userId);
    if (!row || (row.confirmedAt !== null) !== confirmed) return null;
    const opened = await openTotpSecret(row.secretSealed, secret);
    // Sealed under another SVC_JWT_SECRET: no code can be checked, as if there were no app.
    if (opened === null) logger.warn({ user_id: userId }, "authenticator app secret sealed under another secret");
    return opened === null ? null : { base32: opened, sealed: row.secretSealed };
  }

  /**
   * Checks the factor, spending what it spends (the code's step, the recovery code): the amr name it
   * proves, or the refusal to throw. `webauthnChallenge`: the challenge offered for a passkey answer.
   */
  async function check(
    user: UserRecord,
    shown: ShownFactor,
    webauthnChallenge: string | null,
    origin: Origin,
  ): Promise<{ amr: string } | AppError> {
    switch (shown.method) {
      case "totp": {
        const app = await appSecret(user.id, true);
        const at = now();
        const step = app === null ? null : matchingStep(app.base32, shown.code, at);
        // The step moves only forward, once: the same code again (here or on another instance) is refused.
        if (step === null || !(await store.acceptStep(user.id, step))) return invalidCode();
        return { amr: AMR.totp };
      }
      case "recovery_code": {
        const canonical = canonicalRecoveryCode(shown.code);
        if (canonical === null) return invalidCode();
        const left = await store.spendRecoveryCode(user.id, recoveryDigest(canonical), iso(now()));
        if (left === null) return invalidCode();
        await note(event("mfa.recovery_code_used", user, origin, { remaining: left }));
        return { amr: AMR.recovery_code };
      }
      case "webauthn": {
        if (!passkeys || webauthnChallenge === null) return invalidPasskey();
        try {
          await passkeys.verifyAssertion(user.id, shown.response, webauthnChallenge);
        } catch (error) {
          if (error instanceof AppError && error.code === "invalid_passkey") return error;
          throw error;
        }
        return { amr: AMR.webauthn };
      }
    }
  }

  /**
   * The factor checked as a guess at the account: reserved against the login throttle first (429 while
   * blocked), given back when it holds. Audited and counted either way; the refusal is thrown after
   * `failed` has run.
   */
  async function verifyFactor(
    user: UserRecord,
    shown: ShownFactor,
    webauthnChallenge: string | null,
    client: Origin,
    purpose: "login" | "step_up" | "remove_totp",
    failed: () => Promise<unknown> = async () => {},
  ): Promise<string> {
    using attempt = await throttle.reserve(`user:${user.id}`, clientKey(client));
    const result = await check(user, shown, webauthnChallenge, client);
    if (result instanceof AppError) {
      await failed();
      counted(shown.method, "failure");
      await note(
        auditEvent("mfa.failed", {
          actor: user.id,
          target: user.id,
          origin: client,
          failed: true,
          detail: { method: shown.method, purpose },
        }),
      );
      throw result;
    }
    await attempt.succeeded();
    counted(shown.method, "success");
    await note(event("mfa.verified", user, client, { method: shown.method, purpose }));
    return result.amr;
  }

  const guard = createStepUpGuard(store, now);

  /** Ten new recovery codes, and their digests for the store. */
  function freshCodes() {
    const codes = newRecoveryCodes();
    return { codes, digests: codes.map((code) => recoveryDigest(canonicalRecoveryCode(code)!)) };
  }

  return {
    /** The step-up check sensitive changes make (the passkey routes' too). */
    guard,

    /** What the user has on, and what a login's second step would accept. */
    async status(user: UserRecord): Promise<MfaStatus> {
      const factors = await store.factors(user.id);
      return {
        totp: {
          enabled: factors.totp?.confirmedAt != null,
          pending: factors.totp?.pending ?? false,
          confirmed_at: factors.totp?.confirmedAt ?? null,
        },
        passkeys: factors.passkeys,
        recovery_codes_left: factors.recoveryCodesLeft,
        methods: hasFactor(factors) ? methodsOf(factors) : [],
      };
    },

    /**
     * Starts (or restarts) an enrolment. 409 mfa_already_enabled while an app is on. With a passkey on, a
     * step-up first: a stale session must not add a factor of its own choosing.
     */
    async enrolTotp(user: UserRecord, token: VerifiedToken): Promise<TotpEnrolment> {
      const already = () =>
        new AppError("mfa_already_enabled", "An authenticator app is on already: turn it off first.");
      if ((await store.totp(user.id))?.confirmedAt) throw already();
      await guard.require(user, token);
      const base32 = newTotpSecret();
      const started = await store.startTotp({
        userId: user.id,
        secretSealed: await sealTotpSecret(base32, secret),
        createdAt: iso(now()),
      });
      if (!started) throw already();
      const uri = otpauthUri(base32, issuer, user.username);
      return { secret: base32, otpauth_uri: uri, qr_svg: qrSvg(uri) };
    },

    /**
     * Turns the pending enrolment on with its first code: the app is the account's second factor from now,
     * and ten recovery codes replace any earlier ones. The session that confirmed has shown a factor. With a
     * passkey on, a step-up first: else a stale session's confirmation would count as one, and could then
     * remove the owner's passkey.
     */
    async confirmTotp(user: UserRecord, token: VerifiedToken, code: string, client: Origin) {
      const noEnrolment = () => notEnabled("No enrolment is waiting: start one with POST auth/mfa/totp.");
      await guard.require(user, token);
      const pending = await appSecret(user.id, false);
      if (pending === null) throw noEnrolment();
      const at = now();
      const step = matchingStep(pending.base32, code, at);
      if (step === null) throw invalidCode();
      const { codes, digests } = freshCodes();
      const enrolled = event("mfa.totp_enrolled", user, client);
      // Replaced since its code was checked (a new enrolment): nothing waits that this code belongs to.
      if (!(await store.confirmTotp(user.id, pending.sealed, step, iso(at), digests, enrolled))) throw noEnrolment();
      if (token.sessionId !== undefined) await store.markSession(user.id, token.sessionId, iso(at));
      return { recovery_codes: codes };
    },

    /** Turns the app off: with a current code, or with the password and a step-up. */
    async removeTotp(user: UserRecord, token: VerifiedToken, input: RemoveTotpInput, client: Origin) {
      if ((input.code === undefined) === (input.password === undefined)) {
        throw new AppError("validation_failed", "Send exactly one of code and password.", {
          errors: [{ field: "code", message: "exactly one of code and password is required" }],
        });
      }
      if (!(await store.totp(user.id))?.confirmedAt) throw notEnabled("No authenticator app is on.");
      if (input.code !== undefined) {
        await verifyFactor(user, { method: "totp", code: input.code }, null, client, "remove_totp");
      } else {
        await guard.require(user, token);
        if (!(await passwords.verify(input.password!, user.passwordHash)))
          throw new AppError("current_password_mismatch", "password does not match.");
      }
      if (!(await store.removeTotp(user.id, event("mfa.totp_removed", user, client))))
        throw notEnabled("No authenticator app is on.");
    },

    /** Ten new recovery codes; the old ones stop working. Needs a factor on, and a step-up. */
    async renewRecoveryCodes(user: UserRecord, token: VerifiedToken, client: Origin) {
      if (!hasFactor(await store.factors(user.id)))
        throw notEnabled("Recovery codes stand in for a second factor: turn one on first.");
      await guard.require(user, token);
      const { codes, digests } = freshCodes();
      if (
        !(await store.replaceRecoveryCodes(
          user.id,
          digests,
          iso(now()),
          event("mfa.recovery_codes_renewed", user, client),
        ))
      )
        throw notEnabled("Recovery codes stand in for a second factor: turn one on first.");
      return { recovery_codes: codes };
    },

    /**
     * A login's first step done (the password right, the account usable): the second step to answer with,
     * or null when the account has no second factor and the session may start at once.
     */
    /** Whether a session of the user's needs a second step (a confirmed app or a passkey). */
    async required(user: UserRecord): Promise<boolean> {
      return hasFactor(await store.factors(user.id));
    },

    async challenge(user: UserRecord, mode: "json" | "cookie"): Promise<MfaChallenge | null> {
      const factors = await store.factors(user.id);
      if (!hasFactor(factors)) return null;
      const methods = methodsOf(factors);
      const assertion = methods.includes("webauthn") ? await passkeys!.assertionOptions(user.id) : null;
      const token = newRefreshToken();
      const at = now();
      const stored = await store.createChallenge({
        digest: mfaTokenDigest(token),
        userId: user.id,
        mode,
        firstFactor: "pwd",
        webauthnChallenge: assertion?.challenge ?? null,
        createdAt: iso(at),
        expiresAt: iso(at + MFA_TOKEN_TTL_SECONDS * 1000),
      });
      // Deleted while its password was checked: as any missing account.
      if (!stored) throw new AppError("invalid_credentials", "Username or password is incorrect.");
      return {
        mfa_required: true,
        mfa_token: token,
        methods: assertion ? methods : methods.filter((method) => method !== "webauthn"),
        expires_in: MFA_TOKEN_TTL_SECONDS,
        ...(assertion && { webauthn: assertion.options as unknown as Record<string, unknown> }),
      };
    },

    /**
     * The login's second step: the session starts (in the mode the first step asked for), or a refusal.
     * `admit` is told that mode before anything is checked or spent, and may refuse it (csrf_refused).
     */
    async completeLogin(
      input: VerifyInput & { mfa_token: string },
      client: ClientInfo,
      admit: (mode: "json" | "cookie") => void = () => {},
    ): Promise<{ answer: TokenPair & { user: UserView }; mode: "json" | "cookie" }> {
      const shown = shownFactor(input);
      const digest = mfaTokenDigest(input.mfa_token);
      const found = await store.challenge(digest);
      const at = now();
      if (!found || found.usedAt !== null || found.failures >= MFA_TOKEN_FAILURES) throw invalidToken();
      if (Date.parse(found.expiresAt) <= at)
        throw new AppError("mfa_token_expired", "The mfa_token is older than 5 minutes: log in again.");
      admit(found.mode);
      const user = await users.findById(found.userId);
      if (!user) throw invalidToken();
      if (user.status !== "active")
        throw new AppError("account_disabled", "This account is disabled; an administrator can enable it.");
      const method = await verifyFactor(user, shown, found.webauthnChallenge, client, "login", () =>
        store.failChallenge(digest),
      );
      // Of two right answers at once, one starts the session.
      if (!(await store.spendChallenge(digest, iso(at)))) throw invalidToken();
      const started = await sessions.start(user, client, {
        login: true,
        mode: found.mode,
        amr: [found.firstFactor, method],
        mfaAt: iso(at),
      });
      if (!started) throw new AppError("account_disabled", "This account is disabled; an administrator can enable it.");
      return { answer: { ...started, user: userView(user, user.id) }, mode: found.mode };
    },

    /** A step-up: the session has shown a second factor now. */
    async stepUp(user: UserRecord, token: VerifiedToken, input: VerifyInput, client: Origin): Promise<StepUp> {
      const shown = shownFactor(input);
      if (!hasFactor(await store.factors(user.id))) throw notEnabled("You have no second factor on.");
      const sessionId = token.sessionId;
      if (sessionId === undefined)
        throw new AppError("unauthorized", "This token belongs to no session: log in again.");
      let challenge: string | null = null;
      if (shown.method === "webauthn") {
        const digest = stepUpDigest(sessionId);
        const offered = await store.challenge(digest);
        const live = offered && offered.userId === user.id && (await store.spendChallenge(digest, iso(now())));
        challenge = live ? offered.webauthnChallenge : null;
      }
      await verifyFactor(user, shown, challenge, client, "step_up");
      const at = now();
      if (!(await store.markSession(user.id, sessionId, iso(at))))
        throw new AppError("unauthorized", "This session has ended: log in again.");
      return { mfa_at: iso(at), step_up_until: iso(at + STEP_UP_SECONDS * 1000) };
    },

    /** The WebAuthn options for a passkey step-up in this session. 409 mfa_not_enabled without passkeys. */
    async stepUpOptions(user: UserRecord, token: VerifiedToken): Promise<Record<string, unknown>> {
      const none = () => notEnabled("You have no passkey to step up with.");
      if (!passkeys || token.sessionId === undefined) throw none();
      const assertion = await passkeys.assertionOptions(user.id);
      if (!assertion) throw none();
      const at = now();
      await store.createChallenge({
        digest: stepUpDigest(token.sessionId),
        userId: user.id,
        mode: "json",
        firstFactor: "session",
        webauthnChallenge: assertion.challenge,
        createdAt: iso(at),
        expiresAt: iso(at + MFA_TOKEN_TTL_SECONDS * 1000),
      });
      return assertion.options as unknown as Record<string, unknown>;
    },
  };
}
