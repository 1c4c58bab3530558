// @svc/client: svc's REST and GraphQL from browsers, Bun and Node 20+.
export { createClient, type Answer, type Client, type ClientOptions, type RequestOptions } from "./client.js";
export type { Fetch, Method } from "./http.js";
export type { Health } from "./health.js";
export type { Auth, LogoutScope, Me, Session, SessionMode } from "./auth.js";
export type { ResetRedemption } from "./held-session.js";
export type {
  EmailChangeConfirmation,
  IfMatch,
  NewUser,
  PasswordChange,
  PendingEmailChange,
  UpdatedMe,
  User,
  UserChanges,
  UserList,
  UserPage,
  UserPageQuery,
  Users,
} from "./users.js";
export { MeChanged } from "./errors-precondition.js";
export type { SessionCalls, SessionInfo, SessionsCalls } from "./sessions.js";
export type {
  AccountChanges,
  AccountFilter,
  AdminCalls,
  AdminUser,
  AuditEvent,
  AuditFilter,
  Backups,
  Invitation,
  InvitationFilter,
  InvitationRequest,
  IssuedInvitation,
  IssuedReset,
  MailFilter,
  NewAccount,
  OutboxMail,
} from "./admin.js";
export type { Paged } from "./admin-lists.js";
export type {
  EmailVerification,
  EmailVerificationCalls,
  VerificationResend,
  VerificationResendRequest,
} from "./email-verification.js";
export type { MailedReset, PasswordResetCalls, ResetRequest, ResetRequested } from "./password-reset.js";
export type { PasskeyCalls, SecondFactorCalls } from "./second-factors.js";
export { oidcSecondStep, type Identity, type OidcCalls, type OidcProvider, type SignInWithOptions } from "./oidc.js";
export type {
  LoginResult,
  MfaChallenge,
  MfaMethod,
  MfaProof,
  MfaStatus,
  Passkey,
  RecoveryCodes,
  SignedIn,
  StepUp,
  TotpEnrolment,
  WebAuthnCreationOptions,
  WebAuthnCredentialDescriptor,
  WebAuthnRequestOptions,
  WebAuthnResponse,
} from "./mfa-types.js";
export type {
  Categories,
  Category,
  CategoryConnection,
  CategoryConnectionArgs,
  CategoryEvent,
  CategoryOrder,
  CreateCategoryInput,
  PageInfo,
  UpdateCategoryInput,
} from "./categories.js";
export type { SubscribeOptions, SubscriptionState } from "./subscription.js";
export type { LiveChange, LiveList, LiveListOptions } from "./live-list.js";
export type {
  Document,
  DocumentNodeLike,
  DocumentTypeDecoration,
  GraphQLRequestOptions,
  ResultOf,
  TypedDocument,
  UntypedDocument,
  VariablesOf,
} from "./graphql.js";
export {
  SvcError,
  isSvcError,
  type ErrorCode,
  type FieldError,
  type GraphQLErrorEntry,
  type ServerErrorCode,
} from "./errors.js";
export { localStorageAdapter, memoryStorage, type SessionStorage } from "./storage.js";
export type { components, paths, operations } from "./openapi.generated.js";
