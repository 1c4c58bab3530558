// Second factors in domain terms (docs/second-factors.md): enrolling and removing an authenticator app,
// recovery codes, what a user has on, a session's step-up, and (login-step.ts) a login's second step.
// Knows nothing of HTTP; throws AppError. Every factor shown is checked by factor-check.ts, against the
// account's login throttle as a password guess is.
import type { Origin } from "../../audit/model.ts";
import { auditNote } from "../../audit/note.ts";
import type { AuditStore, MfaStore, UserRecord, UserStore } from "../../db/store.ts";
import { AppError } from "../../errors/index.ts";
import type { Logger } from "../../observability/log.ts";
import type { MfaVerificationCounter } from "../../observability/metrics.ts";
import type { PasswordHasher } from "../passwords.ts";
import { refreshDigest } from "../refresh-tokens.ts";
import type { SessionService } from "../sessions.ts";
import type { LoginThrottle } from "../throttle.ts";
import type { VerifiedToken } from "../tokens.ts";
import type { PasskeyFactor } from "./contracts.ts";
import { createFactorCheck, invalidCode, ownEvent } from "./factor-check.ts";
import { createLoginStep, MFA_TOKEN_TTL_SECONDS } from "./login-step.ts";
import {
  shownFactor,
  type MfaStatus,
  type RemoveTotpInput,
  type StepUp,
  type TotpEnrolment,
  type VerifyInput,
} from "./model.ts";
import { canonicalRecoveryCode, newRecoveryCodes, recoveryDigest } from "./recovery-codes.ts";
import { createStepUpGuard, hasFactor, STEP_UP_SECONDS } from "./step-up.ts";
import { matchingStep, newTotpSecret, otpauthUri, qrSvg, sealTotpSecret } from "./totp.ts";

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

/** A step-up's passkey challenge is kept as a second step of its own, named by the session. */
const stepUpDigest = (sessionId: string) => refreshDigest(`step-up:${sessionId}`);

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
  const note = auditNote(audit, logger);
  const factors = createFactorCheck({ store, throttle, note, logger, secret, passkeys, counted, now });
  const { appSecret } = factors;

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
      const summary = await store.factors(user.id);
      return {
        totp: {
          enabled: summary.totp?.confirmedAt != null,
          pending: summary.totp?.pending ?? false,
          confirmed_at: summary.totp?.confirmedAt ?? null,
        },
        passkeys: summary.passkeys,
        recovery_codes_left: summary.recoveryCodesLeft,
        methods: hasFactor(summary) ? factors.methodsOf(summary) : [],
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
      const enrolled = ownEvent("mfa.totp_enrolled", user, client);
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
        await factors.verify(user, { method: "totp", code: input.code }, null, client, "remove_totp");
      } else {
        await guard.require(user, token);
        if (!(await passwords.verify(input.password!, user.passwordHash)))
          throw new AppError("current_password_mismatch", "password does not match.");
      }
      if (!(await store.removeTotp(user.id, ownEvent("mfa.totp_removed", user, client))))
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
          ownEvent("mfa.recovery_codes_renewed", user, client),
        ))
      )
        throw notEnabled("Recovery codes stand in for a second factor: turn one on first.");
      return { recovery_codes: codes };
    },

    ...createLoginStep({ store, users, sessions, factors, passkeys, now }),

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
      await factors.verify(user, shown, challenge, client, "step_up");
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
