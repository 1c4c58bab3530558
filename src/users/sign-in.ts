// Signing in, with a password or with a reset code an administrator issued: both throttled per account
// and per client, both recording what they refuse. Knows nothing of HTTP; throws AppError.
import { auditEvent, type AuditAction, type Origin } from "../audit/model.ts";
import { auditNote } from "../audit/note.ts";
import { canonicalResetCode, resetDigest } from "../auth/reset-codes.ts";
import { setBounded } from "../lib/bounded-map.ts";
import type { PasswordHasher } from "../auth/passwords.ts";
import type { LoginThrottle } from "../auth/throttle.ts";
import type { ClientInfo, SessionService } from "../auth/sessions.ts";
import type { EmailVerification } from "../config/index.ts";
import { nameKey, type AuditStore, type PasswordResetStore, type UserRecord, type UserStore } from "../db/store.ts";
import type { Logger } from "../observability/log.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { limitKey } from "../lib/limit-key.ts";
import { resetForm, userView, type LoginInput, type MailedResetInput, type RedeemAnyResetInput } from "./model.ts";
import { newPasswordProblems } from "./rules.ts";
import { prepareReset, type SecondStep, type SignInAnswer } from "./second-step.ts";
import { accountDisabled, emailUnverified, invalidCredentials } from "./sign-in-refusals.ts";

export interface SignInDeps {
  users: UserStore;
  resets: PasswordResetStore;
  audit: AuditStore;
  passwords: PasswordHasher;
  sessions: SessionService;
  throttle: LoginThrottle;
  logger: Logger;
  /** Redeems a mailed reset link's token instead of a code (mail-resets.ts). */
  mailResets: {
    request(email: string, client: Origin): Promise<void>;
    redeem(input: MailedResetInput, client: ClientInfo): Promise<SignInAnswer>;
  };
  /** SVC_EMAIL_VERIFICATION: with required, an unverified account cannot sign in. Left out: off. */
  emailVerification?: EmailVerification;
  /**
   * A login's second step (auth/mfa/): for an account with a second factor, the right password (or a
   * reset) answers with it instead of a session. Left out: every login is one step.
   */
  secondStep?: SecondStep;
}

/** What a login answers: a session, or (for an account with a second factor) its second step. */
export type LoginAnswer = SignInAnswer;

/** How many accounts' running blocks are remembered, so that each block is recorded once per instance. */
const THROTTLED_NOTED = 10_000;

/** login and redeemReset, the two ways to start a session with a secret. */
export function createSignIn({
  users,
  resets,
  audit,
  passwords,
  sessions,
  throttle,
  logger,
  emailVerification = "off",
  mailResets,
  secondStep,
}: SignInDeps) {
  /** With required verification, the right secret learns the address is unverified, and nothing more. */
  const unverified = (user: UserRecord) => emailVerification === "required" && user.emailVerifiedAt === null;
  /** Records an event that goes with no change (a refused login). */
  const note = auditNote(audit, logger);

  /** Until when each account's current block has been recorded: a block is one event, not one per request. */
  const throttledUntil = new Map<string, number>();
  /** Reserves a login attempt; a refusal is recorded once per block. */
  async function reserve(
    action: AuditAction,
    account: string,
    clientKey: string,
    target: string | null,
    origin: Origin,
  ) {
    try {
      return await throttle.reserve(account, clientKey);
    } catch (error) {
      const retryAfter =
        error instanceof AppError && error.code === "too_many_requests" && error.headers?.["retry-after"];
      const now = Date.now();
      if (retryAfter && (throttledUntil.get(account) ?? 0) <= now) {
        setBounded(throttledUntil, account, now + Number(retryAfter) * 1000, THROTTLED_NOTED);
        await note(auditEvent(action, { target, origin, failed: true, detail: { retry_after_s: Number(retryAfter) } }));
      }
      throw error;
    }
  }

  return {
    /** Mails a reset link to the address's account, if any (mail-resets.ts); the same answer either way. */
    requestPasswordReset: (email: string, client: Origin) => mailResets.request(email, client),

    /**
     * Checks the password and starts a session, or answers the second step the account's second factor
     * asks for; `client.address` also keys the per-client failure limit.
     */
    async login({ username, password, mode }: LoginInput, client: ClientInfo): Promise<LoginAnswer> {
      const user = await users.findByLogin(username);
      // Unknown names are throttled like accounts, so a block does not reveal who exists either.
      const account = user ? `user:${user.id}` : `login:${nameKey(username)}`;
      const clientKey = `client:${limitKey(client.address)}`;
      // Counted as a failure from here on unless it succeeds: a burst cannot get more guesses checked.
      using attempt = await reserve("login.throttled", account, clientKey, user?.id ?? null, client);
      // An unknown user still costs one argon2id verify, so timing does not reveal who exists.
      const ok = user ? await passwords.verify(password, user.passwordHash) : await passwords.verifyNothing(password);
      const refused = (reason: string) =>
        note(
          auditEvent("login.failed", { target: user?.id ?? null, origin: client, failed: true, detail: { reason } }),
        );
      if (!user || !ok) {
        await refused(user ? "wrong_password" : "unknown_account");
        throw invalidCredentials();
      }
      // With a second factor, only its step clears the account's failures (wrong codes among them): the
      // password alone gives its attempt back, so "login, wrong codes, login" cannot guess forever.
      if (await secondStep?.required(user)) await attempt.released();
      else await attempt.succeeded();
      // Only the right password learns that the account is disabled: a guess gets the ordinary 401.
      if (user.status !== "active") {
        await refused("account_disabled");
        throw accountDisabled();
      }
      if (unverified(user)) {
        await refused("email_unverified");
        throw emailUnverified();
      }
      // The password alone is not enough for an account with a second factor: no session yet, its second step.
      const second = secondStep && (await secondStep.challenge(user, mode ?? "json"));
      if (second) return second;
      const started = await sessions.start(user, client, { login: true, ...(mode && { mode }), amr: ["pwd"] });
      if (!started) {
        // Changed while its password was checked: disabled, or deleted (as unknown as any missing account).
        if ((await users.findById(user.id))?.status === "disabled") throw accountDisabled();
        throw invalidCredentials();
      }
      return { ...started, user: userView(user, user.id) };
    },

    /**
     * Redeems a reset code an administrator issued: sets the new password, ends every earlier session
     * and starts one (answered as a login). Attempts are throttled as logins are, under their own key.
     */
    async redeemReset(body: RedeemAnyResetInput, client: ClientInfo): Promise<SignInAnswer> {
      const form = resetForm(body);
      if (form.by === "token") return mailResets.redeem(form.input, client);
      const { input } = form;
      const problems = await newPasswordProblems("new_password", input.new_password);
      if (problems.length > 0) throw invalidFields(problems);
      const user = await users.findByLogin(input.username);
      const account = `reset:${user ? user.id : nameKey(input.username)}`;
      const clientKey = `client:${limitKey(client.address)}`;
      using attempt = await reserve("password_reset.throttled", account, clientKey, user?.id ?? null, client);
      const refused = (reason: string) =>
        note(
          auditEvent("password_reset.failed", {
            target: user?.id ?? null,
            origin: client,
            failed: true,
            detail: { reason },
          }),
        );
      const invalid = async (reason: "unknown_account" | "malformed_code" | "invalid_code") => {
        await refused(reason);
        return new AppError(
          "invalid_reset_code",
          "The reset code is wrong, expired or already used; ask for a new one.",
        );
      };
      const code = canonicalResetCode(input.reset_code);
      if (!user) throw await invalid("unknown_account");
      if (!code) throw await invalid("malformed_code");
      // The code is checked before the address: a wrong one learns nothing of the account.
      if (unverified(user)) {
        if (!(await resets.live(resetDigest(code), user.id, new Date().toISOString())))
          throw await invalid("invalid_code");
        await attempt.succeeded();
        await refused("email_unverified");
        throw emailUnverified();
      }
      const reset = await prepareReset({ sessions, passwords, secondStep }, user, input, client);
      const { redemption } = reset;
      const result = await resets.redeem(
        resetDigest(code),
        user.id,
        redemption,
        auditEvent("password_reset.redeemed", { actor: user.id, target: user.id, origin: client }, redemption.at),
      );
      // Wrong, spent, replaced or expired: the store keeps only the live code's digest, so they look alike.
      if (result === "invalid") throw await invalid("invalid_code");
      await attempt.succeeded();
      if (result === "disabled") {
        await refused("account_disabled");
        throw accountDisabled();
      }
      return reset.answer(result);
    },
  };
}
