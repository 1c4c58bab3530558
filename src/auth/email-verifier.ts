// Verified e-mail addresses (SVC_EMAIL_VERIFICATION): the mail a new account or a resend gets, with a
// one-time token in its link (24 h), the token redeemed, and the throttles that keep resends from
// becoming a way to mail someone without end. Knows nothing of HTTP; throws AppError.
import { auditEvent, type Origin } from "../audit/model.ts";
import type { MailConfig } from "../config/index.ts";
import type {
  EmailVerificationStore,
  MailOutboxStore,
  NewUser,
  ThrottleStore,
  UserRecord,
  UserStore,
  VerificationIssue,
} from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { limitKey } from "../lib/limit-key.ts";
import { NIL } from "../lib/ids.ts";
import { createComposer } from "../mail/compose.ts";
import { mailLink } from "../mail/links.ts";
import { type NamedLimit, windowsWait } from "../signup/throttle.ts";
import { linkTokenDigest, newLinkToken } from "../users/link-tokens.ts";
import { tooManyRequests } from "./throttle.ts";

export const VERIFICATION_TTL_MS = 24 * 3600_000;

/** Resends per account (by Bearer) and per address (by e-mail): one a minute, five an hour. */
export const RESEND_LIMITS: readonly NamedLimit[] = [
  { name: "minute", clientMax: 1, clientWindowMs: 60_000 },
  { name: "hour", clientMax: 5, clientWindowMs: 3600_000 },
];
/** Resends by e-mail from one client address, whichever addresses they name. */
export const RESEND_CLIENT_LIMIT = { clientMax: 20, clientWindowMs: 3600_000 } as const;

export interface EmailVerifierDeps {
  mail: MailConfig;
  /** The server's secret (config.jwt.secret): the mails' bodies are sealed under it (mail/sealed-bodies.ts). */
  secret: Uint8Array;
  users: Pick<UserStore, "findByLogin">;
  verifications: EmailVerificationStore;
  /** For a resend by address that sends nothing: the same work on no rows (MailOutboxStore.decoy). */
  outbox: Pick<MailOutboxStore, "decoy">;
  /** Resend counts: the login throttle's store, keys of their own. */
  throttle: ThrottleStore;
  now?: () => number;
}

export type EmailVerifier = ReturnType<typeof createEmailVerifier>;

/** SVC_EMAIL_VERIFICATION=off: no link is sent, whoever asks, so that a 202 never promises one. */
export const verificationOff = () =>
  new AppError(
    "email_verification_off",
    "E-mail verification is off here (SVC_EMAIL_VERIFICATION=off): no verification link is sent.",
  );

const notConfigured = () =>
  new AppError("mail_not_configured", "svc sends no mail here (no SVC_SMTP_URL in production): nothing can be sent.");

export function createEmailVerifier({
  mail,
  secret,
  users,
  verifications,
  outbox,
  throttle,
  now = Date.now,
}: EmailVerifierDeps) {
  const composer = createComposer({ ...mail, secret }, now);
  const mailOn = mail.transport.kind !== "off";

  /**
   * A new token for the user's address, its mail and its event: nothing written yet. `nobody`: why no
   * account gets it (a decoy's event: failed, no target).
   */
  function issueFor(
    user: Pick<UserRecord, "id" | "username" | "email">,
    origin: Origin,
    actor: string | null,
    nobody?: "unknown" | "verified" | "inactive",
  ) {
    const token = newLinkToken();
    const at = now();
    const createdAt = new Date(at).toISOString();
    const expiresAt = new Date(at + VERIFICATION_TTL_MS).toISOString();
    const issue: VerificationIssue = {
      token: { digest: linkTokenDigest(token), userId: user.id, email: user.email, createdAt, expiresAt },
      mail: composer.compose(
        "verify_email",
        { address: user.email, userId: user.id },
        { username: user.username, link: mailLink(mail, "verifyEmail", token) },
      ),
      audit: auditEvent(
        "email_verification.sent",
        nobody
          ? { actor, target: null, origin, failed: true, detail: { expires_at: expiresAt, account: nobody } }
          : { actor, target: user.id, origin, detail: { expires_at: expiresAt } },
        createdAt,
      ),
    };
    return issue;
  }

  /** Throws `mail_not_configured` while mail is off, else `email_verification_off` while verification is. */
  function refuseWhenOff(): void {
    if (!mailOn) throw notConfigured();
    if (mail.verification === "off") throw verificationOff();
  }

  /** Counts one resend against each limit under `key`; the wait (ms) of the first that is full, else 0. */
  const resendWait = (key: string, limits: readonly NamedLimit[]) =>
    windowsWait(throttle, "verify-resend", key, limits, now);

  return {
    /** SVC_EMAIL_VERIFICATION. */
    mode: mail.verification,

    refuseWhenOff,

    /**
     * The verification to write with a new account (users.create, invitations.redeem), sent on `actor`'s
     * doing (the new user signing up, an administrator, null for the CLI): undefined while verification
     * is off, or when the account is verified from the start.
     */
    forNewAccount(user: NewUser, origin: Origin, actor: string | null): VerificationIssue | undefined {
      if (mail.verification === "off" || !mailOn || user.emailVerifiedAt) return undefined;
      return issueFor(user, origin, actor);
    },

    /** Whether the account may not sign in yet: verification is required and its address is unverified. */
    blocks: (user: UserRecord): boolean => mail.verification === "required" && user.emailVerifiedAt === null,

    /**
     * Redeems a mailed token: the address is verified. Throws `invalid_mail_token` (unknown, used,
     * replaced, of another kind, or for an address the account no longer has), `mail_token_expired`.
     */
    async verify(token: string, origin: Origin): Promise<UserRecord> {
      const at = new Date(now()).toISOString();
      const result = await verifications.redeem(
        linkTokenDigest(token),
        at,
        auditEvent("email_verification.redeemed", { origin }, at),
      );
      if (result === "invalid")
        throw new AppError(
          "invalid_mail_token",
          "This link is not one that can be used: wrong, already used, or replaced by a newer one. Ask for a new one.",
        );
      if (result === "expired")
        throw new AppError("mail_token_expired", "This link has expired (it works for 24 hours); ask for a new one.");
      return result;
    },

    /**
     * Mails the caller a new link (earlier ones stop working). An address already verified gets none and
     * the call is a no-op. Throws `mail_not_configured`, `email_verification_off`, or 429
     * `too_many_requests` past one a minute or five an hour.
     */
    async resend(caller: UserRecord, origin: Origin): Promise<void> {
      refuseWhenOff();
      if (caller.emailVerifiedAt !== null) return;
      const wait = await resendWait(`user:${caller.id}`, RESEND_LIMITS);
      if (wait > 0) throw tooManyRequests(wait, (seconds) => `A link was sent recently; ask again in ${seconds} s.`);
      await verifications.issue(issueFor(caller, origin, caller.id));
    },

    /**
     * Mails a new link to the account with this address, if there is one that is active, unverified and
     * within its limits, and the client is within its own; otherwise nothing. Tells nothing either way,
     * so that no one learns which addresses have accounts. Only while verification is required (an
     * unverified account cannot sign in to ask with a token). Throws `mail_not_configured`.
     */
    async resendTo(email: string, origin: Origin & { address: string }): Promise<void> {
      if (!mailOn) throw notConfigured();
      const address = email.toLowerCase();
      if ((await resendWait(`client:${limitKey(origin.address)}`, [{ name: "client", ...RESEND_CLIENT_LIMIT }])) > 0)
        return;
      if ((await resendWait(`address:${address}`, RESEND_LIMITS)) > 0) return;
      const user = await users.findByLogin(address);
      if (user && user.emailVerifiedAt === null && user.status === "active" && user.email === address) {
        await verifications.issue(issueFor(user, origin, null));
        return;
      }
      // No unverified account has it: the same mail composed and the same statements run on no rows, and
      // the request recorded (email_verification.sent, failed, no target), so both take the same time.
      const nobody = !user ? "unknown" : user.emailVerifiedAt !== null ? "verified" : "inactive";
      const decoy = issueFor({ id: NIL, username: address, email: address }, origin, null, nobody);
      await outbox.decoy({ ...decoy.token, kind: "email_verification" }, decoy.mail, decoy.audit);
    },
  };
}
