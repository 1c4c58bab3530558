// The account services, built once from the configuration and the store: the app serves them over
// HTTP and the CLI calls them on the box, so an account made or changed either way obeys the same rules.
import { createAdminService } from "../admin/service.ts";
import { createPasswordHasher } from "../auth/passwords.ts";
import { createSessionService } from "../auth/sessions.ts";
import { createLoginThrottle } from "../auth/throttle.ts";
import { throttleWhenFull } from "../auth/throttle-memory.ts";
import { createTokenService } from "../auth/tokens.ts";
import type { Config } from "../config/index.ts";
import type { Store } from "../db/store.ts";
import type { Logger } from "../observability/log.ts";
import { createUserService } from "../users/service.ts";
import { createComposer } from "../mail/compose.ts";
import { createMailResets } from "../users/mail-resets.ts";
import { createEmailChanges } from "../users/email-changes.ts";
import { createEmailVerifier } from "../auth/email-verifier.ts";
import { freshSignIn } from "../users/fresh-sign-in.ts";
import { createInvitationService } from "../signup/invitations.ts";
import { createSignupService } from "../signup/service.ts";
import { createSignupThrottle } from "../signup/throttle.ts";
import { createSecondFactors } from "../auth/mfa/service.ts";
import type { PasskeyFactor } from "../auth/mfa/contracts.ts";
import type { MfaVerificationCounter } from "../observability/metrics.ts";

/** What the app adds to the services the CLI shares: its clock, the passkey code, metrics. */
export interface ServiceExtras {
  /** The time second factors keep (TOTP steps, mfa_token and step-up expiry); the real one unless a test moves it. */
  now?: () => number;
  /** The passkey code's side of a second step (src/auth/passkeys/); without it, passkeys are not offered. */
  passkeys?: PasskeyFactor;
  /** svc_mfa_verifications_total. */
  mfaCounted?: MfaVerificationCounter;
}

export function accountServices(config: Config, store: Store, logger: Logger, extras: ServiceExtras = {}) {
  const tokens = createTokenService(config.jwt.secret, config.jwt.ttlSeconds);
  // Login and sign-up counts alike go to the database, or to memory while its storage is full.
  const throttleState = throttleWhenFull(store.throttle);
  const throttle = createLoginThrottle(throttleState, config.loginThrottle);
  const sessions = createSessionService({
    sessions: store.sessions,
    revocations: store.revocations,
    tokens,
    throttle,
    settings: config.sessions,
    logger,
  });
  const passwords = createPasswordHasher(config.passwordCost);
  // Resets and changes of address by mail (#55): their mails go to the outbox with the change.
  const composer = createComposer({ ...config.mail, secret: config.jwt.secret });
  const verifier = createEmailVerifier({
    mail: config.mail,
    secret: config.jwt.secret,
    users: store.users,
    verifications: store.emailVerifications,
    outbox: store.mail,
    throttle: throttleState,
  });
  const mfa = createSecondFactors({
    ...{ store: store.mfa, users: store.users, audit: store.audit, passwords, sessions, throttle, logger },
    secret: config.jwt.secret,
    issuer: config.mail.productName,
    ...(extras.passkeys && { passkeys: extras.passkeys }),
    ...(extras.mfaCounted && { counted: extras.mfaCounted }),
    ...(extras.now && { now: extras.now }),
  });
  const mailResets = createMailResets({
    ...{ mail: config.mail, composer, users: store.users, resets: store.mailedResets, audit: store.audit },
    ...{ passwords, sessions, throttle, logger, secondStep: mfa },
  });
  const users = createUserService({
    users: store.users,
    resets: store.resets,
    audit: store.audit,
    passwords,
    sessions,
    throttle,
    logger,
    mailResets,
    emailVerification: config.mail.verification,
    verifier,
    secondStep: mfa,
    freshSignIn: freshSignIn(store, extras.now ?? Date.now),
  });
  const emailChanges = createEmailChanges({
    ...{ mail: config.mail, composer, users: store.users, changes: store.emailChanges, accounts: users },
    throttle: throttleState,
  });
  const admin = createAdminService({
    accounts: users,
    users: store.users,
    resets: store.resets,
    audit: store.audit,
    verifications: store.emailVerifications,
    mfa: store.mfa,
    resetCodeTtlSeconds: config.resetCodeTtlSeconds,
  });
  const signups = createSignupService({
    mode: config.signup.mode,
    accounts: users,
    invitations: store.invitations,
    throttle: createSignupThrottle(throttleState, config.signup),
  });
  const invitations = createInvitationService({
    invitations: store.invitations,
    ttlSeconds: config.signup.invitationTtlSeconds,
  });
  // The login throttle and its state go to the passkey routes too: a passkey's failures count with a password's.
  const logins = { sessions, throttle, throttleState };
  return { tokens, sessions, users, admin, signups, invitations, emailChanges, verifier, mfa, logins };
}
