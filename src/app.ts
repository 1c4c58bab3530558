// createApp(deps): every feature mounted in one visible place, behind the request pipeline (request id,
// headers, body limit, metrics, access line). Tests call app.handle(request); serve.ts serves
// app.handlersOn(listener), the server adapter's (outer-handler.ts).
import { Elysia } from "elysia";
import { adminRoutes } from "./admin/index.ts";
import { backupFigures, backupHealth } from "./backup/health.ts";
import { backupRoutes } from "./backup/index.ts";
import type { Backups } from "./backup/service.ts";
import { invitationRoutes } from "./admin/invitations.ts";
import { authRoutes } from "./auth/index.ts";
import { createPasskeyFactor, passkeyRoutes, passkeyServices } from "./auth/passkeys/index.ts";
import { relyingParty } from "./auth/passkeys/relying-party.ts";
import { emailVerificationRoutes } from "./auth/email-verification.ts";
import { createAuthenticator } from "./auth/authenticator.ts";
import { createCategoryService } from "./categories/service.ts";
import type { Config } from "./config/index.ts";
import type { VersionedStore } from "./db/store.ts";
import { caching } from "./cache/caching.ts";
import { createPageJson } from "./users/page-json.ts";
import { GRAPHQL_PATH, graphqlRoutes } from "./graphql/index.ts";
import { healthRoutes, PROBE_PATHS } from "./health/index.ts";
import { healthProbes, type Probes } from "./health/probes.ts";
import { CONSOLE_PATH, consoleRoutes } from "./console/index.ts";
import { corsFor } from "./http/cors.ts";
import { createIdempotency } from "./http/idempotency.ts";
import { outerHandler, type OuterHandler } from "./http/outer-handler.ts";
import { requestPipeline } from "./http/request-pipeline.ts";
import { type AllowedMethods, allowedMethods } from "./http/allowed-methods.ts";
import { DOCS_PATH, openapiRoutes, SPEC_PATH } from "./http/openapi-routes.ts";
import { exposure, viaOf } from "./http/exposure.ts";
import { socketOf } from "./http/request-context.ts";
import { problemAnswers } from "./http/problem-answers.ts";
import { proxySchemeWarning } from "./http/proxy-scheme.ts";
import type { Logger, Loggers } from "./observability/log.ts";
import { createMetrics, metricsRoutes } from "./observability/metrics.ts";
import { type Clock, REAL_CLOCK } from "./backup/clock.ts";
import { summarisingRepeats } from "./observability/log-dedupe.ts";
import { describeDatabase } from "./db/describe.ts";
import { accountServices } from "./process/services.ts";
import { usersRoutes } from "./users/index.ts";
import { accountMailRoutes } from "./users/mail-routes.ts";
import { accountPages } from "./mail/pages.ts";
import { AppError } from "./errors/index.ts";
import { createHub } from "./realtime/hub.ts";
import type { SenderFigures } from "./mail/sender.ts";
import { adminMailRoutes } from "./mail/admin.ts";
import { createAccountResolver } from "./auth/oidc/accounts.ts";
import { createOidcProviders, type OidcProviders } from "./auth/oidc/providers.ts";
import { oidcRoutes } from "./auth/oidc/routes.ts";
import { createOidcService } from "./auth/oidc/service.ts";

export interface AppDeps {
  config: Config;
  store: VersionedStore;
  loggers: Loggers;
  /** The health probes' answers, when serve.ts has been answering them since before the app loaded. */
  probes?: Probes;
  /** The backups serve.ts runs (SVC_BACKUP_TO on SQLite); admin/backups answers backups_not_configured without. */
  backups?: Backups;
  /** The mail sender serve.ts runs (mail on), for its metrics and health; undefined until it has started. */
  mail?: () => SenderFigures | undefined;
  /** The certificate serve.ts serves now (SVC_TLS_CERT), for its expiry metric. */
  certificate?: () => { notAfter: string };
  /**
   * What repeated log lines are summarised by (log-dedupe.ts), and the time second factors keep (TOTP
   * steps, mfa_token and step-up expiry); the real time unless a test moves it.
   */
  clock?: Clock;
  /**
   * The OpenID providers (SVC_OIDC_PROVIDERS), discovered already or being so; the app makes and starts its
   * own from the configuration unless given (a test that waits for discovery first).
   */
  oidcProviders?: OidcProviders;
}

export function createApp({
  config,
  store: database,
  loggers: given,
  probes,
  backups,
  mail,
  certificate,
  clock = REAL_CLOCK,
  oidcProviders,
}: AppDeps): App {
  // Every per-request line goes through this: the database's failures are one line per event (log-dedupe.ts).
  const logger = summarisingRepeats(given.logger, clock, describeDatabase(config.database));
  const loggers = { ...given, logger };
  // Everything below sees the plain contract; the cache layer alone knows the table versions.
  const cache = caching(database);
  const { store } = cache;
  const metrics = createMetrics(store);
  // A passkey can be a login's second step and a step-up: the second-factor code asks it through contracts.ts.
  const passkeyFactor = createPasskeyFactor({ passkeys: store.passkeys, rp: relyingParty(config.mail) });
  const { tokens, sessions, users, admin, signups, invitations, emailChanges, verifier, mfa, logins } = accountServices(
    config,
    store,
    logger,
    { now: () => clock.now(), mfaCounted: metrics.mfaVerification, passkeys: passkeyFactor },
  );
  /** The step-up sensitive changes need (the passkey routes' removal too). */
  const stepUp = mfa.guard;
  const authenticator = createAuthenticator(tokens, store);
  const passkeys = passkeyServices(config, store, logins, logger, metrics.mfaVerification);
  const idempotency = createIdempotency({
    store: store.idempotency,
    secret: config.jwt.secret,
    ttlSeconds: config.idempotencyTtlSeconds,
    keysPerCaller: config.idempotencyKeysPerCaller,
  });
  const providers = oidcProviders ?? startedProviders(config, logger);
  const oidc = createOidcService({
    providers,
    rules: { publicUrl: config.mail.publicUrl, returnUrls: config.oidc.returnUrls },
    secret: Buffer.from(config.jwt.secret).toString("base64url"),
    identities: store.identities,
    users: store.users,
    accounts: createAccountResolver({
      users: store.users,
      identities: store.identities,
      invitations: store.invitations,
      signup: config.signup.mode,
      now: () => clock.now(),
    }),
    sessions,
    secondStep: mfa,
    audit: store.audit,
    emailVerification: config.mail.verification,
    logger,
    now: () => clock.now(),
  });
  const exposed = exposure(config);
  const via = (request: Request) => viaOf(socketOf(request));
  const routeDeps = { authenticator, idempotency, maxBodyBytes: config.maxBodyBytes, trustProxy: config.trustProxy };
  // Every /admin route module mounts it (admin/guard.ts): the role, and a second factor under SVC_ADMIN_MFA.
  const adminGuard = { authenticator, policy: config.mfa.admin, factors: store.mfa };
  const corsOrigins = config.corsOrigins;
  const categories = createCategoryService(store.categories);
  const hub = createHub({
    feed: store.changes,
    log: store.categoryEvents,
    ...config.subscriptions,
    async recheckToken(authorization) {
      try {
        await authenticator.authenticate(authorization);
        return true;
      } catch (error) {
        return error instanceof AppError && error.code === "unauthorized" ? false : "unknown";
      }
    },
    metrics: { sent: metrics.subscriptionEventsSent, dropped: metrics.subscriptionDropped },
    logger,
  });
  metrics.reportSubscriptions(hub.counts);
  if (backups) metrics.reportBackups(backupFigures(backups));
  if (certificate) metrics.reportCertificate(certificate);
  if (config.mail.transport.kind !== "off") metrics.reportMail(() => mail?.());

  const graphql = graphqlRoutes({
    config: config.graphql,
    metrics,
    categories,
    authenticator,
    logger,
    answers: cache.answers,
    maxBodyBytes: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    idempotency,
    hub,
  });

  // The 405 check and the operations paths need every route, so they read them once they are all mounted.
  let routes: AllowedMethods | undefined;
  let opsPaths: AllowedMethods | undefined;
  const pipeline = requestPipeline({
    probes: PROBE_PATHS,
    logProbes: config.logProbes,
    loggers,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    opsOnly: config.opsAddress ? (path) => opsPaths!.methodsFor(path).length > 0 : null,
    hsts: config.env === "production" && config.tls !== null,
    preflights: config.corsOrigins.length > 0,
  });
  const app = new Elysia({ normalize: false })
    .use(pipeline.plugin)
    .use(problemAnswers({ logger, methodsFor: (path) => routes!.methodsFor(path), answered: pipeline.answered }))
    .use(corsFor(config.corsOrigins))
    .use(proxySchemeWarning(config, logger))
    .use(openapiRoutes())
    .use(config.adminConsole ? consoleRoutes() : new Elysia())
    .use(
      healthRoutes(
        probes ??
          healthProbes(
            store,
            config.env,
            backups && backupHealth(backups),
            config.mail.transport.kind === "off" ? undefined : () => mail?.()?.health ?? "ok",
          ),
        (request) => exposed.healthDetails(via(request)),
      ),
    )
    .use(
      config.metrics
        ? metricsRoutes(metrics, (request) =>
            exposed.metricsRefusal(via(request), request.headers.get("authorization")),
          )
        : new Elysia(),
    )
    .use(authRoutes({ users, sessions, corsOrigins, mfa, ...routeDeps }))
    .use(passkeyRoutes({ passkeys: passkeys.service, stepUp, corsOrigins, ...routeDeps }))
    .use(oidcRoutes({ oidc, sessions: store.sessions, stepUp, ...routeDeps }))
    .use(accountMailRoutes({ users, emailChanges, ...routeDeps }))
    .use(accountPages())
    .use(emailVerificationRoutes({ verifier, ...routeDeps }))
    .use(usersRoutes({ users, emailChanges, signups, pageJson: createPageJson(), stepUp, ...routeDeps }))
    .use(adminRoutes({ admin, adminGuard, ...routeDeps }))
    .use(invitationRoutes({ invitations, adminGuard, ...routeDeps }))
    .use(
      adminMailRoutes({
        mail: store.mail,
        configured: config.mail.transport.kind !== "off",
        adminGuard,
        idempotency,
        trustProxy: config.trustProxy,
      }),
    )
    .use(
      backupRoutes({
        backups: backups ?? null,
        databaseKind: store.kind,
        audit: store.audit,
        adminGuard,
        ...routeDeps,
      }),
    )
    .use(graphql.routes);
  routes = allowedMethods(app.routes);
  opsPaths = allowedMethods(opsRoutes(app.routes));
  const handle = app.fetch;
  const outer = outerHandler({
    app: (request) => cache.request(() => handle(request)),
    maxBodyBytes: config.maxBodyBytes,
    logger,
    websocket: { path: GRAPHQL_PATH, upgrade: graphql.websocket.upgrade, handler: graphql.websocket.handler },
  });
  async function closeStreams() {
    await hub.close();
    await graphql.websocket.closeAll();
  }
  return Object.assign(outer, { closeStreams, routes, requestsBegun: pipeline.requestsBegun });
}

/** The configured providers, their discovery begun (a provider not reached is retried on its own). */
function startedProviders(config: Config, logger: Logger): OidcProviders {
  const providers = createOidcProviders(config.oidc.providers, { logger });
  if (config.oidc.providers.length > 0) void providers.start();
  return providers;
}

/**
 * The routes the operations listener alone serves when there is one: metrics, the console, the API docs
 * and GraphiQL. Health, the REST API (which the console calls) and GraphQL are served on both.
 */
function opsRoutes<Route extends { method: string; path: string }>(routes: readonly Route[]): Route[] {
  const ops = (path: string) =>
    path === "/svc/metrics" ||
    path === CONSOLE_PATH ||
    path.startsWith(`${CONSOLE_PATH}/`) ||
    path === SPEC_PATH ||
    path === DOCS_PATH ||
    path.startsWith(`${DOCS_PATH}/`) ||
    path === `${GRAPHQL_PATH}/playground`;
  return routes.filter((route) => route.method === "GET" && ops(route.path));
}

export type App = OuterHandler & {
  /** Ends every subscription (their streams complete) and stops following changes: before shutdown. */
  closeStreams(): Promise<void>;
  /** The methods of every path, from the app's public list of routes. */
  routes: AllowedMethods;
  /** Requests handed to the app so far, probes aside: what tells a busy svc from an idle one. */
  requestsBegun(): number;
};
