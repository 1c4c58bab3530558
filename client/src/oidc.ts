// Signing in through OpenID providers (docs/oidc.md), joined to the client's `auth` (client.ts): the
// providers for sign-in buttons, the browser's start at svc, the second step a cookie sign-in may end on, and
// the identities linked to one's account. The one-time code of mode=code is traded by auth.exchangeCode.
import type { Auth } from "./auth.js";
import { answerOf, type Call, type Http, type Method } from "./http.js";
import type { MfaChallenge, MfaMethod, WebAuthnRequestOptions } from "./mfa-types.js";
import type { components, operations } from "./openapi.generated.js";

const OIDC = "/svc-api/v1/auth/oidc";
const IDENTITIES = "/svc-api/v1/auth/identities";
/** How long svc's mfa_token lives (docs/second-factors.md): the fragment does not say. */
const MFA_TOKEN_SECONDS = 300;

export type OidcProvider = components["schemas"]["OidcProviders"]["providers"][number];
export type Identity = components["schemas"]["Identity"];
type StartQuery = NonNullable<operations["startOidcSignIn"]["parameters"]["query"]>;

export interface SignInWithOptions {
  /** Where the flow ends: this page by default in a browser (svc's console elsewhere). */
  returnTo?: string;
  /** cookie (a cookie-mode client's default): signed in by svc's cookie. code (a json-mode client's): `?code=`. */
  mode?: StartQuery["mode"];
  /** An invitation code, when svc signs up by invitation only. */
  invitation?: string;
}

export interface OidcCalls {
  /** The providers one can sign in with, in svc's order (none when SVC_OIDC_PROVIDERS is empty). */
  providers(): Promise<OidcProvider[]>;
  /**
   * Sends the browser to svc's start of a sign-in at `provider` (location.assign) and returns that address;
   * where there is no `location` (Bun, Node, a server) it only returns it, for you to redirect to.
   */
  signInWith(provider: string, options?: SignInWithOptions): string;
  /** The identities at providers linked to the signed-in account, oldest first. */
  identities(): Promise<Identity[]>;
  /**
   * Starts linking `provider` to the signed-in account: sends the browser to the answer's address, as
   * signInWith does, and returns it. Needs a step-up when the account has a second factor
   * (mfa_step_up_required). invalid_return_to, not_found, oidc_provider_unavailable.
   */
  linkIdentity(provider: string, options?: { returnTo?: string }): Promise<string>;
  /** Unlinks the identity; needs a step-up as linking does. not_found, last_sign_in_method. */
  unlinkIdentity(provider: string): Promise<void>;
}

/** The page's `location`, where there is one (a browser); undefined in Bun, Node and servers. */
const pageLocation = () => (globalThis as { location?: Pick<Location, "assign" | "href" | "hash"> }).location;

/** Goes to `url` where there is a page to leave; answers it either way. */
function navigate(url: string): string {
  pageLocation()?.assign(url);
  return url;
}

/** The page's address without its fragment: where a flow started here comes back to. */
function thisPage(): string | undefined {
  const href = pageLocation()?.href;
  return href?.split("#")[0];
}

export function oidcCalls(http: Http, auth: Auth): OidcCalls {
  const send = async <T>(method: Method, path: string, body?: unknown): Promise<T> => {
    const call: Call = { method, path, ...(body !== undefined && { body }) };
    return answerOf<T>(await auth.authorized(call));
  };
  const at = (provider: string) => encodeURIComponent(provider);
  return {
    providers: async () => {
      const call: Call = { method: "GET", path: OIDC };
      return (await answerOf<components["schemas"]["OidcProviders"]>(await http.send(call, null))).providers;
    },
    signInWith: (provider, { returnTo = thisPage(), mode, invitation } = {}) => {
      const query = { return_to: returnTo, mode: mode ?? (auth.mode === "cookie" ? "cookie" : "code"), invitation };
      return navigate(http.url(`${OIDC}/${at(provider)}`, query));
    },
    identities: async () => (await send<components["schemas"]["IdentityList"]>("GET", IDENTITIES)).items,
    linkIdentity: async (provider, { returnTo = thisPage() } = {}) => {
      const body = returnTo === undefined ? {} : { return_to: returnTo };
      const { url } = await send<components["schemas"]["OidcLinkStart"]>("POST", `${IDENTITIES}/${at(provider)}`, body);
      return navigate(url);
    },
    unlinkIdentity: (provider) => send("DELETE", `${IDENTITIES}/${at(provider)}`),
  };
}

/**
 * The second step a cookie sign-in through a provider ended on, read from the fragment svc put it in
 * (`#mfa_token=…&methods=…&expires_in=…`, and `webauthn=` with a passkey's options as base64url JSON); null when
 * the fragment holds none. Complete it with auth.verifyMfa as a login's. Remove the fragment from the address
 * bar (history.replaceState) once read.
 */
export function oidcSecondStep(fragment: string): MfaChallenge | null {
  const values = new URLSearchParams(fragment.replace(/^#/, ""));
  const mfaToken = values.get("mfa_token");
  if (!mfaToken) return null;
  const webauthn = passkeyOptions(values.get("webauthn"));
  const methods = (values.get("methods") ?? "")
    .split(",")
    .filter((method) => method !== "" && (method !== "webauthn" || webauthn !== undefined)) as MfaMethod[];
  const expiresIn = Number(values.get("expires_in") ?? MFA_TOKEN_SECONDS);
  return {
    mfaRequired: true,
    mfaToken,
    methods,
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : MFA_TOKEN_SECONDS,
    ...(webauthn && { webauthn }),
  };
}

/** A passkey's request options from the fragment's base64url JSON; undefined when absent or unreadable. */
function passkeyOptions(encoded: string | null): WebAuthnRequestOptions | undefined {
  if (!encoded) return undefined;
  try {
    const text = new TextDecoder().decode(
      Uint8Array.from(atob(encoded.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
    );
    const options: unknown = JSON.parse(text);
    return options && typeof options === "object" && typeof (options as { challenge?: unknown }).challenge === "string"
      ? (options as WebAuthnRequestOptions)
      : undefined;
  } catch {
    return undefined;
  }
}
