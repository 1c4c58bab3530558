// The OpenID providers svc signs in through: each discovered from its issuer's
// /.well-known/openid-configuration by openid-client, kept, and discovered again now and then. A provider
// unreachable at start does not stop svc: it is tried again with growing pauses and, until reached,
// answers as unavailable. Its keys (the JWKS) are jose's to fetch, afresh for each ID token checked: a
// rotation is followed at the next sign-in, and a key rotated away is trusted no more.

import { createRemoteJWKSet } from "jose";
import * as client from "openid-client";
import type { OidcProviderConfig } from "../../config/oidc.ts";
import type { LineLogger } from "../../observability/log-lines.ts";

export type ProviderState =
  | { kind: "ready"; provider: OidcProviderConfig; configuration: client.Configuration; keys: ProviderKeys }
  | { kind: "unavailable"; provider: OidcProviderConfig; reason: string };

/** The provider's published signing keys (its JWKS), fetched by jose for each ID token checked. */
export type ProviderKeys = ReturnType<typeof createRemoteJWKSet>;

export interface OidcProviders {
  /** The providers as configured, in order: what sign-in pages offer. */
  readonly configured: readonly OidcProviderConfig[];
  /** undefined: no provider of that name. */
  state(name: string): ProviderState | undefined;
  /**
   * As state, once the first discovery of every provider has been tried (at once after that): the first
   * sign-ins after start wait for a discovery under way rather than being told the provider is unavailable.
   */
  settled(name: string): Promise<ProviderState | undefined>;
  /** Discovers every provider not yet reached; resolves once each has been tried once. */
  start(): Promise<void>;
  stop(): void;
}

export interface DiscoveryOptions {
  logger: LineLogger;
  /** How long a discovery document is used before it is fetched again (it is kept if that fails). */
  refreshSeconds?: number;
  /** The first pause after a failed discovery; it doubles up to `maxRetrySeconds`. */
  retrySeconds?: number;
  maxRetrySeconds?: number;
  /** Seconds each request to a provider may take. */
  timeoutSeconds?: number;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function createOidcProviders(
  configured: readonly OidcProviderConfig[],
  options: DiscoveryOptions,
): OidcProviders {
  const { logger, refreshSeconds = 6 * 3600, retrySeconds = 1, maxRetrySeconds = 300, timeoutSeconds = 10 } = options;
  const states = new Map<string, ProviderState>(
    configured.map((provider) => [provider.name, { kind: "unavailable", provider, reason: "not discovered yet" }]),
  );
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  let stopped = false;
  let firstTries: Promise<void> | undefined;

  async function discover(provider: OidcProviderConfig): Promise<boolean> {
    const issuer = new URL(provider.issuer);
    try {
      const configuration = await client.discovery(
        issuer,
        provider.clientId,
        { client_secret: provider.clientSecret },
        client.ClientSecretPost(provider.clientSecret),
        {
          timeout: timeoutSeconds,
          // Plain HTTP only to a provider on this machine (the configuration refuses it elsewhere).
          ...(issuer.protocol === "http:" &&
            LOOPBACK.has(issuer.hostname) && { execute: [client.allowInsecureRequests] }),
        },
      );
      const jwksUri = configuration.serverMetadata().jwks_uri;
      if (!jwksUri)
        throw new Error("its discovery document names no jwks_uri: svc cannot check an ID token's signature");
      const keys = createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: timeoutSeconds * 1000,
        // Fetched for each ID token (one request beside the token's): a cached set would go on trusting a key
        // the provider rotated away until the cache aged out. The token comes straight from the provider's
        // token endpoint, so only the provider can make svc fetch its keys, once a sign-in.
        cooldownDuration: 0,
        cacheMaxAge: 0,
      });
      states.set(provider.name, { kind: "ready", provider, configuration, keys });
      return true;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const previous = states.get(provider.name);
      // A refresh that fails keeps the document already read: the provider answered it once.
      if (previous?.kind !== "ready") states.set(provider.name, { kind: "unavailable", provider, reason });
      logger.warn({ provider: provider.name, issuer: provider.issuer, err: reason }, "OpenID provider not reached");
      return false;
    }
  }

  function schedule(provider: OidcProviderConfig, seconds: number, pause: number) {
    if (stopped) return;
    const timer = setTimeout(async () => {
      const reached = await discover(provider);
      if (reached) {
        if (pause > retrySeconds) logger.info({ provider: provider.name }, "OpenID provider reached");
        schedule(provider, refreshSeconds, retrySeconds);
      } else schedule(provider, pause, Math.min(pause * 2, maxRetrySeconds));
    }, seconds * 1000);
    // Waiting on a provider never keeps the process alive.
    timer.unref?.();
    timers.set(provider.name, timer);
  }

  return {
    configured,
    state: (name) => states.get(name),
    async settled(name) {
      await firstTries;
      return states.get(name);
    },
    start() {
      firstTries ??= Promise.all(
        configured.map(async (provider) => {
          const reached = await discover(provider);
          schedule(provider, reached ? refreshSeconds : retrySeconds, reached ? retrySeconds : retrySeconds * 2);
        }),
      ).then(() => {});
      return firstTries;
    },
    stop() {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
