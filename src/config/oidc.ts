// Sign-in through OpenID Connect providers (SVC_OIDC_PROVIDERS and each provider's SVC_OIDC_<NAME>_*,
// SVC_OIDC_RETURN_URLS): who svc trusts to say who a user is (docs/oidc.md).

import { ConfigError, type Env } from "./values.ts";

export interface OidcProviderConfig {
  /** How routes name it (`/auth/oidc/{name}`): lower case letters, digits and hyphens. */
  name: string;
  /** The issuer exactly as the provider writes it in its discovery document and ID tokens. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What svc asks for; always holds openid. */
  scopes: string[];
  /** What the sign-in button says: "Sign in with <label>". */
  label: string;
}

export interface OidcConfig {
  providers: OidcProviderConfig[];
  /**
   * SVC_OIDC_RETURN_URLS: where a flow may end besides svc's own origin (apps on other origins, native
   * apps' redirect URLs). Compared whole, without query: a listed URL allows itself with any query.
   */
  returnUrls: string[];
}

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const DEFAULT_SCOPES = ["openid", "email", "profile"];

/** The prefix of a provider's variables: SVC_OIDC_ and its name upper-cased, hyphens as underscores. */
export function providerVariable(name: string, suffix: string): string {
  return `SVC_OIDC_${name.toUpperCase().replaceAll("-", "_")}_${suffix}`;
}

export function oidc(env: Env): OidcConfig {
  const list = env.SVC_OIDC_PROVIDERS?.trim() ?? "";
  const names = list === "" ? [] : list.split(",").map((name) => name.trim());
  for (const name of names) {
    if (!NAME.test(name))
      throw new ConfigError(
        "SVC_OIDC_PROVIDERS",
        `names providers with lower-case letters, digits and hyphens, separated by commas (such as google,keycloak); ${JSON.stringify(name)} is not one`,
        list,
      );
  }
  const seen = new Set<string>();
  for (const name of names) {
    const key = providerVariable(name, "");
    if (seen.has(key))
      throw new ConfigError("SVC_OIDC_PROVIDERS", `names ${name} twice (or two names with the same variables)`, list);
    seen.add(key);
  }
  return { providers: names.map((name) => provider(env, name)), returnUrls: returnUrls(env) };
}

function provider(env: Env, name: string): OidcProviderConfig {
  const required = (suffix: string, what: string) => {
    const variable = providerVariable(name, suffix);
    const value = env[variable]?.trim() ?? "";
    if (value === "")
      throw new ConfigError(variable, `is required for the provider ${name} in SVC_OIDC_PROVIDERS (${what})`, "");
    return value;
  };
  const issuerVariable = providerVariable(name, "ISSUER");
  const issuer = required("ISSUER", "its issuer URL, such as https://accounts.google.com");
  const bad = (why: string) => new ConfigError(issuerVariable, why, issuer);
  if (!URL.canParse(issuer)) throw bad("must be a URL such as https://accounts.google.com");
  const parsed = new URL(issuer);
  if (parsed.search || parsed.hash || parsed.username || parsed.password)
    throw bad("must not carry a query, a fragment or credentials");
  if (parsed.protocol !== "https:" && !(parsed.protocol === "http:" && LOOPBACK.has(parsed.hostname)))
    throw bad("must be an https:// URL (http:// only for a loopback host)");
  const scopesVariable = providerVariable(name, "SCOPES");
  const scopesText = env[scopesVariable]?.trim() ?? "";
  const scopes = scopesText === "" ? DEFAULT_SCOPES : scopesText.split(/[\s,]+/).filter(Boolean);
  if (!scopes.every((scope) => /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)))
    throw new ConfigError(
      scopesVariable,
      "must be scopes separated by spaces or commas, such as openid email profile",
      scopesText,
    );
  if (!scopes.includes("openid")) scopes.unshift("openid");
  const label = env[providerVariable(name, "LABEL")]?.trim() || name.charAt(0).toUpperCase() + name.slice(1);
  return {
    name,
    issuer,
    clientId: required("CLIENT_ID", "the client id the provider gave svc"),
    clientSecret: required("CLIENT_SECRET", "the client secret the provider gave svc"),
    scopes,
    label,
  };
}

function returnUrls(env: Env): string[] {
  const text = env.SVC_OIDC_RETURN_URLS?.trim() ?? "";
  if (text === "") return [];
  return text.split(",").map((entry) => {
    const url = entry.trim();
    const bad = (why: string) => new ConfigError("SVC_OIDC_RETURN_URLS", why, url);
    if (!URL.canParse(url))
      throw bad("must list absolute URLs separated by commas, such as https://app.example.com/signed-in");
    const parsed = new URL(url);
    if (parsed.search || parsed.hash || parsed.username || parsed.password)
      throw bad("must list URLs without a query, a fragment or credentials");
    // A native app's own scheme (com.example.app:/callback) is a URL too; javascript: and data: are not places.
    if (["javascript:", "data:", "file:", "blob:", "vbscript:"].includes(parsed.protocol))
      throw bad(`must not list a ${parsed.protocol} URL`);
    if (parsed.protocol === "http:" && !LOOPBACK.has(parsed.hostname))
      throw bad("must list https:// URLs (http:// only for a loopback host)");
    return parsed.href;
  });
}
