// The schemas the OpenAPI document names (components.schemas): each shape defined once, next to its
// feature, and referred to from the routes and from one another by ref(name) (openapi.ts).
import type { TSchema } from "elysia";
import { adminUserSchema, auditEventSchema, issuedResetSchema } from "../admin/model.ts";
import { sessionSchema } from "../auth/model.ts";
import {
  mfaChallengeSchema,
  mfaStatusSchema,
  recoveryCodesSchema,
  stepUpSchema,
  totpEnrolmentSchema,
  webauthnOptionsSchema,
} from "../auth/mfa/model.ts";
import { resendSchema } from "../auth/email-verification.ts";
import {
  creationOptionsSchema,
  passkeyListSchema,
  passkeySchema,
  requestOptionsSchema,
} from "../auth/passkeys/model.ts";
import { backupSnapshotSchema, backupsSchema } from "../backup/model.ts";
import { checksSchema, healthSchema, liveSchema, readySchema } from "../health/model.ts";
import { outboxMailSchema } from "../mail/model.ts";
import { invitationSchema, issuedInvitationSchema } from "../signup/model.ts";
import { pendingEmailChangeSchema, resetRequestedSchema } from "../users/mail-model.ts";
import { loginSchema, meSchema, pairSchema, userSchema } from "../users/model.ts";
import { problemSchema, type SchemaName } from "./openapi-parts.ts";

export type { SchemaName } from "./openapi-parts.ts";

export const NAMED_SCHEMAS: Record<SchemaName, TSchema> = {
  User: userSchema,
  Me: meSchema,
  TokenPair: pairSchema,
  Login: loginSchema,
  Session: sessionSchema,
  AdminUser: adminUserSchema,
  IssuedReset: issuedResetSchema,
  AuditEvent: auditEventSchema,
  Invitation: invitationSchema,
  IssuedInvitation: issuedInvitationSchema,
  Backups: backupsSchema,
  BackupSnapshot: backupSnapshotSchema,
  Live: liveSchema,
  Ready: readySchema,
  Health: healthSchema,
  HealthChecks: checksSchema,
  ResetRequested: resetRequestedSchema,
  PendingEmailChange: pendingEmailChangeSchema,
  OutboxMail: outboxMailSchema,
  Problem: problemSchema,
  VerificationResend: resendSchema,
  MfaStatus: mfaStatusSchema,
  TotpEnrolment: totpEnrolmentSchema,
  RecoveryCodes: recoveryCodesSchema,
  MfaChallenge: mfaChallengeSchema,
  StepUp: stepUpSchema,
  MfaWebauthnOptions: webauthnOptionsSchema,
  Passkey: passkeySchema,
  PasskeyList: passkeyListSchema,
  PasskeyCreationOptions: creationOptionsSchema,
  PasskeyRequestOptions: requestOptionsSchema,
};
