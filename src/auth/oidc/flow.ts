// One sign-in at an OpenID provider, both ends: the authorization URL (code flow, PKCE S256, state and
// nonce) with what the callback needs to check it, sealed for a short-lived cookie; and the callback,
// where openid-client checks everything (state, the `iss` response parameter where sent, the code's
// exchange, the ID token's signature against the provider's keys, iss, aud, exp, nonce) before svc reads
// who the user is. svc handles no JWT or JWKS itself.

import { jwtVerify } from "jose";
import * as client from "openid-client";
import { sealUnder, unsealUnder } from "../../lib/sealing.ts";
import type { ProviderKeys } from "./providers.ts";

/** What a flow ends in, besides signing in: chosen at its start and carried through the provider. */
export interface FlowIntent {
  /** "cookie": a cookie session in this browser; "code": a one-time code handed to `returnTo`. */
  mode: "cookie" | "code";
  /** Where the browser goes at the end (already checked against svc's origin and SVC_OIDC_RETURN_URLS). */
  returnTo: string;
  /** The signed-in user linking this provider to their account, when the flow is a link. */
  linkUserId?: string;
  /** An invitation code for sign-up by invitation. */
  invitation?: string;
}

/** What the flow's cookie holds: the intent and the secrets the callback checks the provider's answer with. */
export interface FlowState extends FlowIntent {
  provider: string;
  verifier: string;
  state: string;
  nonce: string;
  /** When the flow expires, in milliseconds since the epoch. */
  expiresAt: number;
}

/** Who the provider says signed in: the issuer and subject are the identity, the rest is for the account. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  preferredUsername: string | null;
  name: string | null;
}

export type FlowFailure =
  /** The user cancelled or the provider refused (its `error`, such as access_denied, in `detail`). */
  | "provider_error"
  /** The callback's state is not this browser's flow's: a forged or crossed callback. */
  | "state_mismatch"
  /** No flow cookie, or one that is expired, altered, or another provider's. */
  | "flow_expired"
  /** The code, its exchange or the ID token failed a check (signature, iss, aud, exp, nonce...). */
  | "invalid_response";

export class OidcFlowError extends Error {
  constructor(
    readonly reason: FlowFailure,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = "OidcFlowError";
  }
}

const SEAL_LABEL = "svc oidc flow";
/** Signatures with a published public key: never "none", never a secret shared with svc. */
const SIGNATURES = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];
/** How long a user may take at the provider: long enough to sign in there, with a second factor. */
export const FLOW_SECONDS = 600;

export function redirectUri(publicUrl: string, provider: string): string {
  return `${publicUrl}/svc-api/v1/auth/oidc/${provider}/callback`;
}

/** The provider's authorization URL and the sealed state for the flow's cookie. */
export async function beginFlow(
  configuration: client.Configuration,
  options: { provider: string; scopes: string[]; redirectUri: string; secret: string; now?: number },
  intent: FlowIntent,
): Promise<{ url: URL; sealed: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const flow: FlowState = {
    ...intent,
    provider: options.provider,
    verifier,
    state: client.randomState(),
    nonce: client.randomNonce(),
    expiresAt: (options.now ?? Date.now()) + FLOW_SECONDS * 1000,
  };
  const url = client.buildAuthorizationUrl(configuration, {
    redirect_uri: options.redirectUri,
    scope: options.scopes.join(" "),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state: flow.state,
    nonce: flow.nonce,
  });
  return { url, sealed: await sealUnder(SEAL_LABEL, options.secret, flow) };
}

/** The flow a cookie holds, or an OidcFlowError(flow_expired) for a missing, altered, expired or crossed one. */
export async function openFlow(sealed: string | undefined, provider: string, secret: string, now = Date.now()) {
  const flow = sealed ? ((await unsealUnder(SEAL_LABEL, secret, sealed)) as FlowState | null) : null;
  if (!flow)
    throw new OidcFlowError("flow_expired", "no sign-in was started in this browser, or its cookie was altered");
  if (flow.provider !== provider)
    throw new OidcFlowError("flow_expired", `the sign-in started was with ${flow.provider}`);
  if (flow.expiresAt <= now) throw new OidcFlowError("flow_expired", "the sign-in took too long; start again");
  return flow;
}

/** Checks the provider's answer at `callbackUrl` against `flow`; the identity it proves, or an OidcFlowError. */
export async function completeFlow(
  provider: { configuration: client.Configuration; keys: ProviderKeys },
  callbackUrl: URL,
  flow: FlowState,
): Promise<ProviderIdentity> {
  const { configuration, keys } = provider;
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw failure(error);
  }
  const claims = tokens.claims();
  if (!claims || !tokens.id_token) throw new OidcFlowError("invalid_response", "the provider sent no ID token");
  // openid-client checked the claims, and trusts the token's signature on the token endpoint's TLS alone
  // (as OpenID Connect allows); svc checks it against the provider's published keys as well (fetched afresh:
  // providers.ts).
  try {
    await jwtVerify(tokens.id_token, keys, {
      issuer: configuration.serverMetadata().issuer,
      audience: configuration.clientMetadata().client_id,
      algorithms: SIGNATURES,
    });
  } catch (error) {
    throw new OidcFlowError(
      "invalid_response",
      `the ID token's signature: ${error instanceof Error ? error.message : error}`,
    );
  }
  const text = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: text(claims.email),
    // Only a literal true counts: some providers send "true", which a lax reading would trust.
    emailVerified: claims.email_verified === true,
    preferredUsername: text(claims.preferred_username),
    name: text(claims.name),
  };
}

function failure(error: unknown): OidcFlowError {
  if (error instanceof client.AuthorizationResponseError)
    return new OidcFlowError("provider_error", described(error.error, error.error_description));
  // The token endpoint refused the code (invalid_grant: spent, expired or another client's).
  if (error instanceof client.ResponseBodyError)
    return new OidcFlowError("invalid_response", described(error.error, error.error_description));
  // openid-client wraps oauth4webapi's finding, whose message names the check (the claim, the parameter).
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (/"state" response parameter/.test(message)) return new OidcFlowError("state_mismatch", message);
  return new OidcFlowError("invalid_response", message);
}

function described(code: string, description: string | undefined): string {
  return description ? `${code}: ${description}` : code;
}
