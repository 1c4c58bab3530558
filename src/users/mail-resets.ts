// Password reset by mail: anyone may ask for a link for an address, and the answer is the same whether
// or not an account has it; the link's token, redeemed with a new password, signs in as a reset code
// does (sign-in.ts), ending every earlier session. Knows nothing of HTTP; throws AppError.
import { auditEvent, type Origin } from "../audit/model.ts";
import type { PasswordHasher } from "../auth/passwords.ts";
import type { LoginThrottle, Reservation } from "../auth/throttle.ts";
import type { ClientInfo, SessionService } from "../auth/sessions.ts";
import type { MailConfig } from "../config/index.ts";
import type { AuditStore, MailedResetStore, UserStore } from "../db/store.ts";
import { NIL } from "../lib/ids.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { limitKey } from "../lib/limit-key.ts";
import type { Composer } from "../mail/compose.ts";
import { mailLink } from "../mail/links.ts";
import type { Logger } from "../observability/log.ts";
import { expiredLink, invalidLink, LINK_TTL, linkTokenDigest, newLinkToken } from "./link-tokens.ts";
import type { MailedResetInput } from "./model.ts";
import { newPasswordProblems } from "./rules.ts";
import { prepareReset, type SecondStep, type SignInAnswer } from "./second-step.ts";
import { accountDisabled } from "./sign-in-refusals.ts";

export interface MailResetDeps {
  mail: MailConfig;
  composer: Composer;
  users: UserStore;
  resets: MailedResetStore;
  audit: AuditStore;
  passwords: PasswordHasher;
  sessions: SessionService;
  throttle: LoginThrottle;
  logger: Logger;
  /** With a second factor, a reset ends at the second step, as a login does (second-step.ts). */
  secondStep?: SecondStep;
}

export type MailResets = ReturnType<typeof createMailResets>;

export function mailNotConfigured(): AppError {
  return new AppError("mail_not_configured", "svc sends no mail here (no SVC_SMTP_URL); ask an administrator.");
}

export function createMailResets(deps: MailResetDeps) {
  const { mail, composer, users, resets, audit, passwords, sessions, throttle, logger, secondStep } = deps;
  const clientKey = (client: Origin) => limitKey(client.address ?? "");

  async function note(action: "password_reset.failed", target: string | null, origin: Origin, reason: string) {
    try {
      await audit.record(auditEvent(action, { target, origin, failed: true, detail: { via: "mail", reason } }));
    } catch (error) {
      logger.warn({ err: error }, "audit event not recorded");
    }
  }

  return {
    /**
     * Sends a reset link to the account with this address, if there is one and it is active. Whatever
     * the address, the same work is done (for none, statements that find nothing to change; see
     * MailedResetStore.request) and the caller learns nothing: only a refusal by the throttle, keyed by
     * the address as typed, or mail being off.
     */
    async request(email: string, client: Origin): Promise<void> {
      if (mail.transport.kind === "off") throw mailNotConfigured();
      const address = email.toLowerCase();
      // Counted whatever the outcome (never given back): a mailbox is not flooded, nor a client served.
      using _counted = await throttle.reserve(`reset-request:${address}`, `reset-request-client:${clientKey(client)}`);
      const user = await users.findByLogin(address);
      const known = user !== null && user.status === "active";
      // Made whether or not it is sent, so both answers cost the same work.
      const token = newLinkToken();
      const at = new Date().toISOString();
      const expiresAt = new Date(Date.parse(at) + LINK_TTL.password_reset * 1000).toISOString();
      const link = mailLink(mail, "resetPassword", token);
      const composed = composer.compose(
        "password_reset",
        { address, userId: user?.id ?? null },
        { username: user?.username ?? address, link },
      );
      const record = {
        digest: linkTokenDigest(token),
        kind: "password_reset" as const,
        userId: user?.id ?? NIL,
        email: address,
        createdAt: at,
        expiresAt,
      };
      const detail = { via: "mail", ...(!known && { account: user ? "disabled" : "unknown" }) };
      const target = known ? user.id : null;
      const event = auditEvent("password_reset.requested", { target, origin: client, detail }, at);
      await resets.request(record, composed, event, known);
    },

    /**
     * Redeems a mailed reset token: sets the new password, ends every earlier session and starts one
     * (answered as a login). Throttled as reset codes are: per token and per client.
     */
    async redeem(input: MailedResetInput, client: ClientInfo): Promise<SignInAnswer> {
      const problems = await newPasswordProblems("new_password", input.new_password);
      if (problems.length > 0) throw invalidFields(problems);
      const digest = linkTokenDigest(input.token);
      using attempt: Reservation = await throttle.reserve(`reset:${digest}`, `client:${clientKey(client)}`);
      const refused = async (reason: "invalid_token" | "expired_token", target: string | null) => {
        await note("password_reset.failed", target, client, reason);
        return reason === "expired_token" ? expiredLink() : invalidLink();
      };
      const found = await resets.find(digest, new Date().toISOString());
      if (found === "invalid") throw await refused("invalid_token", null);
      if (found === "expired") throw await refused("expired_token", null);
      const holder = await users.findById(found.userId);
      if (!holder) throw await refused("invalid_token", null);
      const reset = await prepareReset({ sessions, passwords, secondStep }, holder, input, client);
      const { at } = reset.redemption;
      const result = await resets.redeem(
        digest,
        reset.redemption,
        (user) =>
          composer.compose("password_changed", { address: user.email, userId: user.id }, { username: user.username }),
        auditEvent(
          "password_reset.redeemed",
          { actor: found.userId, target: found.userId, origin: client, detail: { via: "mail" } },
          at,
        ),
      );
      if (result === "invalid" || result === "expired")
        throw await refused(result === "expired" ? "expired_token" : "invalid_token", found.userId);
      await attempt.succeeded();
      if (result === "disabled") {
        await note("password_reset.failed", found.userId, client, "account_disabled");
        throw accountDisabled();
      }
      return reset.answer(result);
    },
  };
}
