// What every way of signing in (a password, a reset, a passkey, a login's second step) refuses with, in the
// same words whichever way it was: equal failures look equal.
import { AppError } from "../errors/index.ts";

export function accountDisabled(): AppError {
  return new AppError("account_disabled", "This account is disabled; an administrator can enable it.");
}

export function invalidCredentials(): AppError {
  return new AppError("invalid_credentials", "Username or password is incorrect.");
}

export function emailUnverified(): AppError {
  return new AppError(
    "email_unverified",
    "Confirm your e-mail address first: open the link svc mailed you, or ask for a new one at auth/email/verify/resend.",
  );
}
