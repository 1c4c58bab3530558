// The audit log's actions, in a module of their own that imports nothing: the admin console's page
// (bundled for the browser) offers them as its filter, from this very list.

/** Every action the log records; a filter naming anything else is refused. */
export const AUDIT_ACTIONS = [
  "user.created",
  "user.deleted",
  "login.succeeded",
  "login.failed",
  "login.throttled",
  "password.changed",
  "session.revoked",
  "refresh.reuse_detected",
  "admin.user.created",
  "admin.user.updated",
  "admin.user.deleted",
  "password_reset.issued",
  "password_reset.redeemed",
  "password_reset.failed",
  "password_reset.throttled",
  "invitation.issued",
  "invitation.redeemed",
  "invitation.revoked",
  "category.deleted",
  "backup.requested",
  "email_verification.sent",
  "email_verification.redeemed",
  "email_verification.marked",
  "password_reset.requested",
  "email_change.requested",
  "email_change.confirmed",
  "mail.failed",
  "mfa.totp_enrolled",
  "mfa.totp_removed",
  "mfa.verified",
  "mfa.failed",
  "mfa.recovery_code_used",
  "mfa.recovery_codes_renewed",
  "mfa.reset",
  "passkey.added",
  "passkey.renamed",
  "passkey.removed",
  "oidc.signed_in",
  "oidc.failed",
  "identity.linked",
  "identity.unlinked",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}
