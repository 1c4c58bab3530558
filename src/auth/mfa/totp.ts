// Authenticator app codes (TOTP, RFC 6238) as every app reads an otpauth:// URI: SHA-1, six digits, 30-second
// steps. otpauth computes and checks them; svc decides which step a code belongs to (±1 for clock drift), so
// that the store can accept each step once (RFC 6238 §5.2). The secret is kept sealed under the server's
// secret: a copy of the database alone yields no codes.
import { Secret, TOTP } from "otpauth";
import { renderSVG } from "uqr";
import { sealUnder, unsealUnder } from "../../lib/sealing.ts";

const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** RFC 4226 asks for at least 128 bits; 160 is what SHA-1's block gives and what apps expect. */
const SECRET_BYTES = 20;
/** Steps either side of the current one a code may come from: a phone's clock a little off. */
const DRIFT_STEPS = 1;
const SEAL_LABEL = "svc/totp-secret\0";
const CODE_FORMAT = /^\d{6}$/;

/** A new random secret, base32 (what the otpauth URI and manual entry carry). */
export const newTotpSecret = (): string => new Secret({ size: SECRET_BYTES }).base32;

const totpOf = (secret: string, issuer = "", label = "") =>
  new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: "SHA1",
    digits: DIGITS,
    period: PERIOD_SECONDS,
  });

/** The otpauth:// URI apps scan: issuer = the product's name, label = the username. */
export const otpauthUri = (secret: string, issuer: string, label: string): string =>
  totpOf(secret, issuer, label).toString();

/** The URI as a QR code (SVG), for the page to show. */
export const qrSvg = (uri: string): string => renderSVG(uri);

/** The 30-second step `at` (ms) falls in. */
export const stepAt = (at: number): number => Math.floor(at / 1000 / PERIOD_SECONDS);

/**
 * The step the code is right for, within ±1 of the one `at` falls in; null: no step nearby has this code.
 * Whether that step was used already is the store's to say.
 */
export function matchingStep(secret: string, code: string, at: number): number | null {
  const token = code.replace(/\s/g, "");
  if (!CODE_FORMAT.test(token)) return null;
  const delta = totpOf(secret).validate({ token, timestamp: at, window: DRIFT_STEPS });
  return delta === null ? null : stepAt(at) + delta;
}

const keyText = (secret: Uint8Array) => Buffer.from(secret).toString("base64url");

/** The secret as the database keeps it, sealed under the server's secret (SVC_JWT_SECRET). */
export const sealTotpSecret = (secret: string, serverSecret: Uint8Array): Promise<string> =>
  sealUnder(SEAL_LABEL, keyText(serverSecret), secret);

/** The secret again; null when it was sealed under another server secret (or altered). */
export async function openTotpSecret(sealed: string, serverSecret: Uint8Array): Promise<string | null> {
  const secret = await unsealUnder(SEAL_LABEL, keyText(serverSecret), sealed);
  return typeof secret === "string" ? secret : null;
}
