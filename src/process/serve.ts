// `svc serve`: TLS files (when set) → database (migrated) → listen → logger; the app on the first request
// that needs it. SIGTERM and SIGINT drain, close the database, exit 0. SIGHUP never stops svc: serving
// HTTPS, it reads the certificate and key again and serves new connections with them; otherwise it is
// logged and ignored.
//
// The socket opens as soon as the database is open and migrated, answering the health probes. The app
// (the store's code, Elysia, the routes, GraphQL's engine, the caches) loads when a request first needs
// it; that request, and any arriving meanwhile, wait for it and are then served as usual
// (docs/performance.md, "Footprint"; its cost in bench/results.md).
import type { Config } from "../config/index.ts";
import { describeDatabase, openDatabase, setAsideNotice, type OpenedDatabase, upgradeLogLine } from "../db/open.ts";
import { type LineLogger, startLog } from "../observability/log-lines.ts";
import { describeError } from "../errors/safe-errors.ts";
import { version } from "../../package.json";
import { forwardSocketEvents } from "../http/serve-options.ts";
import { healthProbes } from "../health/probes.ts";
import type { TlsMaterial } from "./tls.ts";
import { type Listeners, openListeners } from "./listeners.ts";
import type { App } from "../app.ts";
import { returnMemoryWhenIdle } from "./idle-memory.ts";
import { PRUNE_EVERY_MS, startPruning, storeJobs, THROTTLE_KEPT_MS } from "./pruning.ts";
import type { MailSender } from "../mail/sender.ts";

export async function serve(config: Config): Promise<void> {
  // Handlers first, long before "svc listening" tells anyone to expect them: a SIGTERM sent right after
  // that line killed the process outright (exit 143) while they were still being installed. A signal
  // during start-up waits for it, then stops svc the same clean way. SIGHUP too needs a handler: Bun's
  // default for it is to die at once. A SIGHUP during start-up is handled once svc listens (serving
  // HTTPS, the certificate is read again, in case the files changed meanwhile).
  let shutdown: ((signal: string) => Promise<void>) | undefined;
  let early: string | undefined;
  let reloadTls: (() => void) | undefined;
  let reloadWhenListening = false;
  let hangUp: (() => void) | undefined;
  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.on(signal, () => (shutdown ? void shutdown(signal) : (early ??= signal)));
  // SIGHUP never stops svc (a stray one, a closed terminal, must not leave a service down that
  // Restart=on-failure would not bring back): it reloads what can be reloaded, and is otherwise logged.
  process.on("SIGHUP", () => (hangUp ? hangUp() : void (reloadWhenListening = true)));
  // Before the database: a missing or bad file stops start-up with one line (ConfigError: exit 2).
  const files = config.tls;
  const readTls = files && (async () => (await import("./tls.ts")).loadTls(files));
  const tls: TlsMaterial | null = readTls && (await readTls());
  /** The certificate served now: the one read at start, then each reloaded at SIGHUP. */
  let served = tls;
  const database = describeDatabase(config.database);
  // svc's own lines and the probes' access lines; pino comes with the app (log-lines.ts). Before the
  // database opens: an upgrade says what it does as it does it.
  const lines = startLog(config.logLevel);
  const { logger } = lines;
  let opened: OpenedDatabase;
  let setAside: readonly string[] = [];
  try {
    opened = await openDatabase(config.database, {
      onSetAside: (moved) => (setAside = moved),
      onUpgrade: (step) => {
        const { fields, msg } = upgradeLogLine(step);
        logger.info(fields, msg);
      },
    });
  } catch (error) {
    // Without its database svc can neither migrate nor serve; a supervisor restarts it once the database is back.
    console.error(`svc: cannot open the database ${database}: ${describeError(error)}`);
    process.exit(1);
  }

  // Scheduled backups (SVC_BACKUP_TO on SQLite): their code is loaded only then.
  const backup = config.backup.to ? await (await import("../backup/start.ts")).startBackups(config, logger) : null;
  const backupDetail = backup ? (await import("../backup/health.ts")).backupHealth(backup) : undefined;
  // The mail sender (mail on): started with the app, or soon after start without one (mails a previous
  // process or another instance left), its code loaded only then.
  let mailSender: MailSender | null | undefined;
  let mailStarting: Promise<void> | undefined;
  const mailOn = config.mail.transport.kind !== "off";
  const startMail = () =>
    (mailStarting ??= (async () => {
      const store = await opened.store();
      mailSender = await (await import("../mail/start.ts")).startMail(config, store, logger);
    })().catch((error: unknown) => logger.error({ err: error }, "the mail sender did not start")));
  const mailAnyway = mailOn ? setTimeout(() => void startMail(), MAIL_START_MS) : undefined;
  mailAnyway?.unref();
  const mailHealth = mailOn ? () => mailSender?.figures().health ?? "ok" : undefined;
  // OpenID providers are discovered from start, not from the first request: an issuer that cannot be reached
  // is a warning in the first second of the log, and tried again on its own (docs/oidc.md).
  const oidcProviders =
    config.oidc.providers.length > 0
      ? (await import("../auth/oidc/providers.ts")).createOidcProviders(config.oidc.providers, { logger })
      : undefined;
  void oidcProviders?.start();
  const probes = healthProbes(opened.probe, config.env, backupDetail, mailHealth);
  let app: App | undefined;
  let loading: Promise<App> | undefined;
  // Until the app is there: the probes, and for anything else the app, loaded by the first request
  // that needs it (docs/performance.md, "Footprint").
  const listeners: Listeners = await openListeners(
    {
      config,
      tls,
      probes,
      access: lines.access,
      logger,
      fetch: (listener) => (request, server) =>
        (loading ??= loadApp().catch(cannotLoad)).then((loaded) => loaded.handlersOn(listener).fetch(request, server)),
      // Bun takes the WebSocket handler when it starts, before the app whose handler it is has loaded.
      websocket: forwardSocketEvents(() => app!.websocket!),
    },
    () => opened.close(),
  );

  let stopPruning: (() => Promise<void>) | undefined;
  const prune = async () => {
    if (stopPruning) return;
    const store = await opened.store();
    stopPruning ??= startPruning({
      jobs: storeJobs(
        store,
        config.auditRetentionSeconds,
        { kept: config.subscriptions.eventsKept, keptForSeconds: config.subscriptions.eventsKeptForSeconds },
        Math.max(
          THROTTLE_KEPT_MS,
          config.loginThrottle.clientWindowMs,
          config.loginThrottle.backoffMaxMs,
          config.signup.clientWindowMs,
        ),
        config.mail.keepSeconds,
      ),
      logger,
    });
  };
  // Pruning starts with the app, or once its period has passed without any request.
  const pruneAnyway = setTimeout(() => void prune(), PRUNE_EVERY_MS);
  pruneAnyway.unref();
  let stopReturningMemory = () => {};

  /** The app, loaded in steps between which probes (and requests, which then wait) are taken in. */
  async function loadApp(): Promise<App> {
    const begun = performance.now();
    const store = await opened.store();
    await sockets();
    const [{ createApp }, { createLoggers }, { bytecodeOrderStats }] = await Promise.all([
      import("../app.ts"),
      import("../observability/log.ts"),
      import("bun:jsc"),
    ]);
    if (mailOn) void startMail();
    await sockets();
    app = createApp({
      config,
      store,
      loggers: createLoggers(config.logLevel),
      probes,
      backups: backup ?? undefined,
      mail: () => mailSender?.figures(),
      certificate: served ? () => served! : undefined,
      oidcProviders,
    });
    listeners.reload(app.handlersOn);
    stopReturningMemory = returnMemoryWhenIdle(app.requestsBegun, opened.releaseMemory, config.releaseCodeAfterMs);
    void prune();
    // How well the build's bytecode profile (src/build/bytecode-order.ts) fits what was loaded: "cold"
    // functions were read from outside the front of the file. Null outside the binary.
    const layout = bytecodeOrderStats();
    const bytecode = layout && { hot: layout.hot, cold: layout.cold, unknown: layout.unknown };
    logger.debug({ load_ms: Math.round(performance.now() - begun), bytecode }, "app loaded");
    return app;
  }

  /** The app is part of the binary: failing to load it is a bug, which no request would get past. */
  function cannotLoad(error: unknown): never {
    logger.error({ err: error }, "svc cannot load its app; stopping");
    lines.flush();
    process.exit(1);
  }

  const certificate = tls && { tls_fingerprint: tls.fingerprint, tls_expires: tls.notAfter };
  logger.info(
    { version, environment: config.env, ...listeners.addresses(), database, ...certificate },
    "svc listening",
  );
  if (tls && Date.parse(tls.notAfter) < Date.now())
    logger.warn({ tls_expires: tls.notAfter }, "the certificate in SVC_TLS_CERT has expired: clients will refuse it");
  if (config.opsAddress && ["0.0.0.0", "::"].includes(config.opsAddress.host))
    logger.warn(
      "SVC_OPS_ADDRESS listens on every address: the operations listener is plain HTTP, for loopback or a private network",
    );
  if (setAside.length > 0) logger.warn({ set_aside: setAside }, setAsideNotice(setAside));
  for (const warning of config.mail.warnings) logger.warn(warning);
  if (config.jwt.ephemeral)
    logger.warn("SVC_JWT_SECRET is not set: a random secret is in use, so tokens end with this process");
  await adviseOnAdmins(opened, logger);

  let stopping = false;
  if (readTls) {
    let rotating = Promise.resolve();
    const rotate = async () => {
      if (stopping) return;
      try {
        const material = await readTls();
        // A SIGTERM that came while the files were read: the drain has begun, and no new socket may open.
        if (stopping) return;
        listeners.public.rotate(material);
        served = material;
        logger.info(
          { tls_fingerprint: material.fingerprint, tls_expires: material.notAfter },
          "TLS certificate reloaded",
        );
      } catch (error) {
        // The one in use stays: svc goes on serving with it, and the next SIGHUP tries again.
        const problem = (error instanceof Error ? error.message : String(error)).split("\n")[0];
        logger.error({}, `TLS certificate not reloaded, the one in use stays: ${problem}`);
      }
    };
    reloadTls = () => void (rotating = rotating.then(rotate));
  }
  // The log level comes from SVC_LOG_LEVEL, which a running process cannot see change: only the
  // certificate can be reloaded (docs/operations.md, "Signals").
  hangUp = () => {
    logger.info(
      { signal: "SIGHUP" },
      reloadTls ? "SIGHUP: reloading the TLS certificate" : "SIGHUP: nothing to reload",
    );
    reloadTls?.();
  };
  if (reloadWhenListening) hangUp();
  shutdown = async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "svc stopping: draining in-flight requests");
    const forced = setTimeout(() => {
      logger.warn({ grace_ms: config.shutdownGraceMs }, "grace period over: closing remaining connections");
      void listeners.stop(true);
    }, config.shutdownGraceMs);
    // An app still loading finishes first: requests wait on it, and it holds the store.
    await loading?.catch(() => {});
    // Subscriptions first: their streams complete (SSE's "complete", WebSocket's close 1001), which
    // would otherwise hold server.stop() until the grace period ran out.
    await app?.closeStreams();
    await listeners.stop();
    clearTimeout(forced);
    clearTimeout(pruneAnyway);
    await stopPruning?.();
    // Mail: the batch in hand is sent and recorded; what waits stays in the outbox for the next start.
    clearTimeout(mailAnyway);
    await mailStarting;
    await mailSender?.stop();
    await backup?.stop();
    stopReturningMemory();
    await opened.close();
    logger.info("svc stopped");
    lines.flush();
    process.exit(0);
  };
  if (early) void shutdown(early);
}

/** How soon after start the mail sender starts when no request has loaded the app. */
const MAIL_START_MS = 5_000;

/** A turn of the event loop: Bun reads the sockets that are ready, and answers what it can. */
function sockets(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One line when nobody can administer accounts, saying how to make an administrator on this box. */
async function adviseOnAdmins(database: OpenedDatabase, logger: LineLogger): Promise<void> {
  try {
    if ((await database.probe.activeAdmins()) === 0)
      logger.warn(
        "no active administrator: make one on this box with `svc admin create --username <name> --email <address>`",
      );
  } catch (error) {
    logger.warn({ err: error }, "could not count administrators");
  }
}
