// Changing one's address while svc sends mail: the change waits for a link mailed to the new address,
// so a stolen session cannot move the account elsewhere unnoticed; the old address is told once it is
// done. Without mail, the users service changes the address at once (service.ts). Knows nothing of HTTP.
import { auditEvent, type Origin } from "../audit/model.ts";
import type { MailConfig } from "../config/index.ts";
import type { EmailChangeStore, ThrottleStore, UserRecord, UserStore } from "../db/store.ts";
import { unauthorized } from "../auth/authenticator.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import type { Composer } from "../mail/compose.ts";
import { mailLink } from "../mail/links.ts";
import { tooManyRequests } from "../auth/throttle.ts";
import { type NamedLimit, windowsWait } from "../signup/throttle.ts";
import { expiredLink, invalidLink, LINK_TTL, linkTokenDigest, newLinkToken } from "./link-tokens.ts";
import type { UpdateSelfInput } from "./model.ts";
import { emailProblem, fieldProblems, usernameProblem } from "./rules.ts";
import type { UserService } from "./service.ts";

export interface EmailChangeDeps {
  mail: MailConfig;
  composer: Composer;
  users: UserStore;
  changes: EmailChangeStore;
  accounts: Pick<UserService, "updateSelf" | "checkPassword">;
  /** Request counts: the login throttle's store, keys of their own. */
  throttle: ThrottleStore;
  now?: () => number;
}

/**
 * Change requests per account: two a minute (a typo put right at once), five an hour. Each mails a stranger's
 * address if the account's owner, or whoever holds their session and password, says so.
 */
export const CHANGE_ACCOUNT_LIMITS: readonly NamedLimit[] = [
  { name: "minute", clientMax: 2, clientWindowMs: 60_000 },
  { name: "hour", clientMax: 5, clientWindowMs: 3600_000 },
];
/** Change requests naming one new address, from any account: one a minute, three an hour. */
export const CHANGE_ADDRESS_LIMITS: readonly NamedLimit[] = [
  { name: "minute", clientMax: 1, clientWindowMs: 60_000 },
  { name: "hour", clientMax: 3, clientWindowMs: 3600_000 },
];

/** A change of address waiting for its link, and the caller's record with the rest of the update applied. */
export interface PendingChange {
  pendingEmail: string;
  user: UserRecord;
}

export type EmailChanges = ReturnType<typeof createEmailChanges>;

export function createEmailChanges({
  mail,
  composer,
  users,
  changes,
  accounts,
  throttle,
  now = Date.now,
}: EmailChangeDeps) {
  /** Counts one request against each limit under `key`; the wait (ms) of the first that is full, else 0. */
  const wait = (key: string, limits: readonly NamedLimit[]) => windowsWait(throttle, "email-change", key, limits, now);

  /** 429 too_many_requests with Retry-After when the account or the new address has asked too often. */
  async function withinLimits(caller: UserRecord, email: string): Promise<void> {
    const ms =
      (await wait(`account:${caller.id}`, CHANGE_ACCOUNT_LIMITS)) ||
      (await wait(`address:${email}`, CHANGE_ADDRESS_LIMITS));
    if (ms === 0) return;
    throw tooManyRequests(ms, (seconds) => `Too many changes of address asked for; try again in ${seconds} s.`);
  }

  return {
    /**
     * An update of yourself that changes the address, while mail is on: the password checked, the address
     * refused at once when taken, the other fields changed now, and the link sent to the new address.
     * null: not such an update (mail off, or the address unchanged), for updateSelf to make.
     */
    async update(
      caller: UserRecord,
      input: UpdateSelfInput,
      options: { ifUnchanged?: boolean },
      origin: Origin,
    ): Promise<PendingChange | null> {
      const email = input.email?.toLowerCase();
      if (mail.transport.kind === "off" || email === undefined || email === caller.email) return null;
      const problems = fieldProblems([
        ["username", input.username, usernameProblem],
        ["email", input.email, emailProblem],
      ]);
      if (problems.length > 0) throw invalidFields(problems);
      await accounts.checkPassword(caller, input.current_password);
      const holder = await users.findByLogin(email);
      if (holder && holder.id !== caller.id) throw new AppError("email_taken", "Another account has this address.");
      // Before anything is written: a refused request changes nothing, the username included.
      await withinLimits(caller, email);
      const user =
        input.username === undefined
          ? caller
          : await accounts.updateSelf(caller, { username: input.username }, options);
      const token = newLinkToken();
      const at = new Date().toISOString();
      const expiresAt = new Date(Date.parse(at) + LINK_TTL.email_change * 1000).toISOString();
      const sent = await changes.request(
        { digest: linkTokenDigest(token), kind: "email_change", userId: caller.id, email, createdAt: at, expiresAt },
        composer.compose(
          "email_change",
          { address: email, userId: caller.id },
          { username: user.username, email, link: mailLink(mail, "confirmEmailChange", token) },
        ),
        auditEvent("email_change.requested", { actor: caller.id, target: caller.id, origin, detail: { email } }, at),
      );
      if (!sent) throw unauthorized(true, "The account was deleted while this request ran.");
      return { pendingEmail: email, user };
    },

    /** Makes the change a mailed link asks for; 409 email_taken when another account took the address meanwhile. */
    async confirm(token: string, origin: Origin): Promise<UserRecord> {
      const at = new Date().toISOString();
      const result = await changes.confirm(
        linkTokenDigest(token),
        at,
        (before, after) =>
          composer.compose(
            "email_changed",
            { address: before.email, userId: before.id },
            { username: after.username, email: after.email },
          ),
        auditEvent("email_change.confirmed", { origin }, at),
      );
      if (result === "invalid") throw invalidLink();
      if (result === "expired") throw expiredLink();
      if (result === "disabled") throw new AppError("account_disabled", "This account is disabled.");
      return result;
    },
  };
}
