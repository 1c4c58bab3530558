// A production svc behind a trusted proxy learns the client's scheme from X-Forwarded-Proto alone: a
// proxy that sends none makes every client look like plain HTTP (cookie sessions get the cookie meant
// for development, and a cookie-mode login from svc's own page is refused as cross-origin). Said in the
// log, since nothing else would show it.
import { Elysia } from "elysia";
import type { Config } from "../config/index.ts";
import type { LineLogger } from "../observability/log-lines.ts";

/** How long after a warning the next one waits, however many requests lack the header. */
const WARN_EVERY_MS = 60 * 60 * 1000;

/** The plugin: an onRequest hook where it can matter (production, SVC_TRUST_PROXY set, svc without its own TLS). */
export function proxySchemeWarning(
  config: Pick<Config, "env" | "trustProxy" | "tls">,
  logger: LineLogger,
  now: () => number = Date.now,
) {
  const plugin = new Elysia({ name: "proxy-scheme-warning" });
  if (config.env !== "production" || config.trustProxy === 0 || config.tls !== null) return plugin;
  let warnedAt = -Infinity;
  return plugin.onRequest(({ request }) => {
    const { headers } = request;
    // Only what a proxy forwarded: a load balancer's probe straight to svc carries none of these.
    if (headers.has("x-forwarded-proto") || !headers.has("x-forwarded-for")) return;
    if (now() - warnedAt < WARN_EVERY_MS) return;
    warnedAt = now();
    logger.warn(
      { trust_proxy: config.trustProxy },
      "a request came through the trusted proxy without X-Forwarded-Proto: svc takes it for plain HTTP " +
        "(cookie sessions lose Secure and __Host-); have the proxy send X-Forwarded-Proto (docs/operations.md, Behind a proxy)",
    );
  });
}
