// `svc serve`: database (migrated) → listen → logger; the app on the first request that needs it.
// SIGTERM, SIGINT and SIGHUP drain, close the database, exit 0.
//
// The socket opens as soon as the database is open and migrated, answering the health probes. The app
// (the store's code, Elysia, the routes, GraphQL's engine, the caches) loads when a request first needs
// it; that request, and any arriving meanwhile, wait for it and are then served as usual
// (docs/performance.md, "Footprint"; its cost in bench/results.md).
import type { Config } from "./config.ts";
import { describeDatabase, openDatabase, setAsideNotice, type OpenedDatabase } from "./db/open.ts";
import { type AccessLog, type LineLogger, startLog } from "./log-lines.ts";
import { describeError } from "./safe-errors.ts";
import { version } from "../package.json";
import type { Serve, Server } from "bun";
import {
  baseHeaders,
  forwardSocketEvents,
  logCompleted,
  type ServerHandlers,
  serveOptions,
} from "./http/outer-handler.ts";
import { healthProbes, type Probes } from "./health/probes.ts";
import { answeredId, beginRequest, type RequestInfo } from "./http/request-context.ts";
import type { App } from "./app.ts";
import { returnMemoryWhenIdle } from "./idle-memory.ts";
import { PRUNE_EVERY_MS, startPruning, storeJobs } from "./pruning.ts";

export async function serve(config: Config): Promise<void> {
  // Handlers first, long before "svc listening" tells anyone to expect them: a SIGTERM sent right after
  // that line killed the process outright (exit 143) while they were still being installed. A signal
  // during start-up waits for it, then stops svc the same clean way. SIGHUP too (a closed terminal, a
  // supervisor's stop): svc has nothing to reload, and Bun's default for it is to die at once, losing
  // in-flight requests and buffered access lines.
  let shutdown: ((signal: string) => Promise<void>) | undefined;
  let early: string | undefined;
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => (shutdown ? void shutdown(signal) : (early ??= signal)));
  }
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
      onUpgrade: (step) =>
        "snapshot" in step
          ? logger.info({ snapshot: step.snapshot }, "kept the database as it was")
          : logger.info({ migration: step.applied, version }, "applied migration"),
    });
  } catch (error) {
    // Without its database svc can neither migrate nor serve; a supervisor restarts it once the database is back.
    console.error(`svc: cannot open the database ${database}: ${describeError(error)}`);
    process.exit(1);
  }

  const probes = healthProbes(opened.probe, config.env);
  let app: App | undefined;
  let loading: Promise<App> | undefined;
  const settings = {
    hostname: config.host,
    port: config.port,
    reusePort: config.reusePort,
    maxBodyBytes: config.maxBodyBytes,
    logger,
  };
  // Until the app is there: the probes, and for anything else the app, loaded by the first request
  // that needs it (docs/performance.md, "Footprint"). With CORS on, the probes' headers come from the app.
  const waiting: ServerHandlers = {
    routes: config.corsOrigins.length === 0 ? earlyProbes(probes, lines.access, config.logProbes) : {},
    fetch: (request, server) =>
      (loading ??= loadApp().catch(cannotLoad)).then((loaded) => loaded.handlers.fetch(request, server)),
  };
  let server: Server<unknown>;
  try {
    server = Bun.serve(
      serveOptions(
        settings,
        waiting,
        // Bun takes the WebSocket handler when it starts, before the app whose handler it is has loaded.
        forwardSocketEvents(() => app!.websocket!),
      ) as Serve.Options<unknown>,
    );
  } catch (error) {
    await opened.close();
    console.error(`svc: cannot listen on ${config.host}:${config.port}: ${listenProblem(error)}`);
    process.exit(1);
  }

  let stopPruning: (() => Promise<void>) | undefined;
  const prune = async () => {
    if (stopPruning) return;
    const store = await opened.store();
    stopPruning ??= startPruning({
      jobs: storeJobs(store, config.auditRetentionSeconds, {
        kept: config.subscriptions.eventsKept,
        keptForSeconds: config.subscriptions.eventsKeptForSeconds,
      }),
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
      import("./app.ts"),
      import("./log.ts"),
      import("bun:jsc"),
    ]);
    await sockets();
    app = createApp({ config, store, loggers: createLoggers(config.logLevel), probes });
    server.reload(serveOptions(settings, app.handlers) as Serve.Options<unknown>);
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

  const address = `http://${server.hostname}:${server.port}`;
  logger.info({ version, environment: config.env, address, database }, "svc listening");
  if (setAside.length > 0) logger.warn({ set_aside: setAside }, setAsideNotice(setAside));
  if (config.jwt.ephemeral)
    logger.warn("SVC_JWT_SECRET is not set: a random secret is in use, so tokens end with this process");
  await adviseOnAdmins(opened, logger);

  let stopping = false;
  shutdown = async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "svc stopping: draining in-flight requests");
    const forced = setTimeout(() => {
      logger.warn({ grace_ms: config.shutdownGraceMs }, "grace period over: closing remaining connections");
      void server.stop(true);
    }, config.shutdownGraceMs);
    // An app still loading finishes first: requests wait on it, and it holds the store.
    await loading?.catch(() => {});
    // Subscriptions first: their streams complete (SSE's "complete", WebSocket's close 1001), which
    // would otherwise hold server.stop() until the grace period ran out.
    await app?.closeStreams();
    await server.stop();
    clearTimeout(forced);
    clearTimeout(pruneAnyway);
    await stopPruning?.();
    stopReturningMemory();
    await opened.close();
    logger.info("svc stopped");
    lines.flush();
    process.exit(0);
  };
  if (early) void shutdown(early);
}

/** A turn of the event loop: Bun reads the sockets that are ready, and answers what it can. */
function sockets(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The probes before the app has loaded, with the headers every answer carries. They write the access
 * line the app's outer handler would, but are not in the metrics: those are the app's.
 */
function earlyProbes(probes: Probes, access: AccessLog, logOk: boolean): ServerHandlers["routes"] {
  return Object.fromEntries(
    Object.entries(probes).map(([path, probe]) => {
      const logged = (request: Request, info: RequestInfo, response: Response) => {
        if (logOk || response.status !== 200)
          logCompleted(access, request, info, path, path, response.status, (performance.now() - info.startedAt) / 1000);
        return response;
      };
      const answer = (request: Request) => {
        const info = beginRequest(request, undefined, false);
        const response = probe(request, baseHeaders(answeredId(info)));
        return response instanceof Promise
          ? response.then((r) => logged(request, info, r))
          : logged(request, info, response);
      };
      return [path, { GET: answer }];
    }),
  );
}

/** Why a socket could not be opened, in one line an operator can act on. */
function listenProblem(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  switch (code) {
    case "EADDRINUSE":
      return "the port is in use (another svc?); stop it, choose another SVC_PORT, or set SVC_REUSE_PORT=true to share the port on purpose";
    // Bun reports a host it cannot resolve (or an impossible address such as 256.1.1.1) as ENOENT,
    // or as EINVAL where the resolver hands back something listen() cannot use (seen on some machines).
    case "ENOENT":
    case "EINVAL":
      return "SVC_HOST is not an address or a host name this machine can resolve (0.0.0.0 listens on every address)";
    case "EADDRNOTAVAIL":
      return "SVC_HOST is not an address of this machine (0.0.0.0 listens on every address)";
    case "EACCES":
      return "permission denied: ports below 1024 need privileges (or CAP_NET_BIND_SERVICE); choose another SVC_PORT";
    default:
      return message;
  }
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
