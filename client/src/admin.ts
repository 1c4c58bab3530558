// The admin routes (`/svc-api/v1/admin`, administrators only: 403 forbidden for anyone else), as
// `client.admin`: accounts and their reset codes, invitations, the audit log, the mail outbox and backups
// (docs/client/admin.md). Types from svc's OpenAPI document.
import type { Auth } from "./auth.js";
import { type Paged, paged, type Query } from "./admin-lists.js";
import { answerOf, type Call, type Method } from "./http.js";
import type { components, operations } from "./openapi.generated.js";

type Schemas = components["schemas"];
type BodyOf<Operation extends keyof operations> = operations[Operation] extends {
  requestBody: { content: { "application/json": infer Body } };
}
  ? Body
  : never;
type FilterOf<Operation extends keyof operations> = NonNullable<operations[Operation]["parameters"]["query"]>;

/** An account as an administrator sees it: e-mail, role, status, last login, second factors. */
export type AdminUser = Schemas["AdminUser"];
export type NewAccount = BodyOf<"adminCreateUser">;
export type AccountChanges = BodyOf<"adminUpdateUser">;
export type AccountFilter = FilterOf<"adminListUsers">;
/** A one-time reset code, shown this once: give it to the account's owner (auth.redeemReset). */
export type IssuedReset = Schemas["IssuedReset"];
export type Invitation = Schemas["Invitation"];
/** An invitation with its code, shown this once: the sign-up passes it as `invitation`. */
export type IssuedInvitation = Schemas["IssuedInvitation"];
export type InvitationRequest = BodyOf<"adminIssueInvitation">;
export type InvitationFilter = FilterOf<"adminListInvitations">;
export type AuditEvent = Schemas["AuditEvent"];
export type AuditFilter = FilterOf<"adminListAudit">;
/** A mail of the outbox: recipient, subject and state, never its body. */
export type OutboxMail = Schemas["OutboxMail"];
export type MailFilter = FilterOf<"adminListMail">;
/** The backup schedule, how it fares, and the snapshots stored. */
export type Backups = Schemas["Backups"];

export interface AdminCalls {
  readonly users: {
    /** Accounts, oldest first, filtered by `search` (a prefix of username or e-mail), `status`, `role`. */
    list(filter?: AccountFilter): Paged<AdminUser>;
    /** An account of either role, whatever SVC_SIGNUP says. username_taken, email_taken, validation_failed. */
    create(account: NewAccount, options?: { idempotencyKey?: string }): Promise<AdminUser>;
    get(id: string): Promise<AdminUser>;
    /** Role or status; disabling ends the account's sessions at once. last_admin. */
    update(id: string, changes: AccountChanges): Promise<AdminUser>;
    /** Its sessions end; its categories stay, with no creator. last_admin. */
    delete(id: string): Promise<void>;
    /** A one-time reset code (it replaces an earlier one). */
    issueReset(id: string): Promise<IssuedReset>;
    /** The address verified on your word; its outstanding verification links stop working. */
    markEmailVerified(id: string): Promise<AdminUser>;
    /** Clears the authenticator app, recovery codes and passkeys: the way back in after a lost phone. */
    resetSecondFactors(id: string): Promise<void>;
  };
  readonly invitations: {
    /** Newest first, without their codes: who issued each, who redeemed it. */
    list(filter?: InvitationFilter): Paged<Invitation>;
    /** For sign-ups while SVC_SIGNUP=invite: for any address, or only `email`; `expires_in` ("7d") bounds it. */
    issue(request?: InvitationRequest): Promise<IssuedInvitation>;
    /** Its code stops working. not_found. */
    revoke(id: string): Promise<void>;
  };
  /** The audit log, newest first, by action, actor, target, user and time. */
  audit(filter?: AuditFilter): Paged<AuditEvent>;
  readonly mail: {
    /** The outbox, newest first; mail_not_configured while mail is off. */
    list(filter?: MailFilter): Paged<OutboxMail>;
    /** A failed notice sent again. mail_not_failed, mail_not_resendable (a link's token has expired). */
    resend(id: string): Promise<OutboxMail>;
  };
  readonly backups: {
    /** backups_not_configured without SVC_BACKUP_TO. */
    get(): Promise<Backups>;
    /** Backs up now; the answer shows it running. backup_in_progress. */
    request(): Promise<Backups>;
  };
}

const ADMIN = "/svc-api/v1/admin";

export function adminCalls(auth: Auth): AdminCalls {
  const send = async <T>(method: Method, path: string, body?: unknown, headers?: Call["headers"]): Promise<T> =>
    answerOf<T>(await auth.authorized({ method, path: `${ADMIN}${path}`, body, headers }));
  const list = <T>(path: string, filter: Query = {}) => paged<T>(auth, `${ADMIN}${path}`, filter);
  const user = (id: string, then = "") => `/users/${encodeURIComponent(id)}${then}`;
  return {
    users: {
      list: (filter) => list("/users", filter),
      create: (account, { idempotencyKey } = {}) =>
        send("POST", "/users", account, idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined),
      get: (id) => send("GET", user(id)),
      update: (id, changes) => send("PATCH", user(id), changes),
      delete: (id) => send("DELETE", user(id)),
      issueReset: (id) => send("POST", user(id, "/password-reset")),
      markEmailVerified: (id) => send("POST", user(id, "/email-verified")),
      resetSecondFactors: (id) => send("DELETE", user(id, "/mfa")),
    },
    invitations: {
      list: (filter) => list("/invitations", filter),
      issue: (request = {}) => send("POST", "/invitations", request),
      revoke: (id) => send("DELETE", `/invitations/${encodeURIComponent(id)}`),
    },
    audit: (filter) => list("/audit", filter),
    mail: {
      list: (filter) => list("/mail", filter),
      resend: (id) => send("POST", `/mail/${encodeURIComponent(id)}/resend`),
    },
    backups: {
      get: () => send("GET", "/backups"),
      request: () => send("POST", "/backups"),
    },
  };
}
