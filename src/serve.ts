// `svc serve`: store (migrated) → listen → app; SIGTERM, SIGINT and SIGHUP drain, close the database, exit 0.
//
// The socket opens as soon as the database is ready, answering the health probes, while the app (its
// routes, Elysia, the caches) loads: a request for anything else waits for it, then is served as usual.
// Start-up is then the database's own time plus a few milliseconds, not the app's (README, "Footprint").
import type { Config } from "./config.ts";
import { describeDatabase, openStore } from "./db/open.ts";
import type { VersionedStore } from "./db/store.ts";
import type { Logger } from "./log.ts";
import { createLoggers } from "./log.ts";
import { describeError } from "./safe-errors.ts";
import { version } from "../package.json";
import type { Serve, Server } from "bun";
import { baseHeaders, type DoorHandlers, forwardSocketEvents, serveOptions } from "./http/front-door.ts";
import { healthProbes, type Probes } from "./health/probes.ts";
import { beginRequest } from "./http/request-context.ts";
import type { App } from "./app.ts";
import { returnMemoryWhenIdle } from "./idle-memory.ts";

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
  const loggers = createLoggers(config.logLevel);
  const { logger } = loggers;
  const database = describeDatabase(config.database);
  let store: VersionedStore;
  try {
    store = await openStore(config.database);
  } catch (error) {
    // Without its database svc can neither migrate nor serve; a supervisor restarts it once the database is back.
    console.error(`svc: cannot open the database ${database}: ${describeError(error)}`);
    process.exit(1);
  }

  const probes = healthProbes(store, config.env);
  let app: App | undefined;
  const { promise: loading, resolve: loaded } = Promise.withResolvers<App>();
  // Until the app is there: the probes (unless CORS is on, whose headers come from the app), and a wait.
  const waiting: DoorHandlers = {
    routes: config.corsOrigins.length === 0 ? earlyProbes(probes) : {},
    fetch: (request, server) => loading.then((door) => door.handlers.fetch(request, server)),
  };
  const settings = {
    hostname: config.host,
    port: config.port,
    reusePort: config.reusePort,
    maxBodyBytes: config.maxBodyBytes,
    logger,
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
    await store.close();
    console.error(`svc: cannot listen on ${config.host}:${config.port}: ${listenProblem(error)}`);
    process.exit(1);
  }
  // Loading the app is synchronous work in steps of a few milliseconds each; between them, probes
  // (and requests, which then wait) that arrived meanwhile are taken in.
  await sockets();
  const [{ createApp }, { startPruning, storeJobs }] = await Promise.all([import("./app.ts"), import("./pruning.ts")]);
  await sockets();
  app = createApp({ config, store, loggers, probes });
  server.reload(serveOptions(settings, app.handlers) as Serve.Options<unknown>);
  loaded(app);
  const stopPruning = startPruning({ jobs: storeJobs(store, config.auditRetentionSeconds), logger });
  const stopReturningMemory = returnMemoryWhenIdle(app.requestsBegun);
  const address = `http://${server.hostname}:${server.port}`;
  logger.info({ version, environment: config.env, address, database }, "svc listening");
  if (config.jwt.ephemeral)
    logger.warn("SVC_JWT_SECRET is not set: a random secret is in use, so tokens end with this process");
  await adviseOnAdmins(store, logger);

  let stopping = false;
  shutdown = async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "svc stopping: draining in-flight requests");
    const forced = setTimeout(() => {
      logger.warn({ grace_ms: config.shutdownGraceMs }, "grace period over: closing remaining connections");
      void server.stop(true);
    }, config.shutdownGraceMs);
    // Subscriptions first: their streams complete (SSE's "complete", WebSocket's close 1001), which
    // would otherwise hold server.stop() until the grace period ran out.
    await app!.closeStreams();
    await server.stop();
    clearTimeout(forced);
    await stopPruning();
    stopReturningMemory();
    await store.close();
    logger.info("svc stopped");
    loggers.flush();
    process.exit(0);
  };
  if (early) void shutdown(early);
}

/** A turn of the event loop: Bun reads the sockets that are ready, and answers what it can. */
function sockets(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The probes before the app has loaded: with the headers every answer carries, uncounted by the metrics. */
function earlyProbes(probes: Probes): DoorHandlers["routes"] {
  return Object.fromEntries(
    Object.entries(probes).map(([path, probe]) => [
      path,
      { GET: (request: Request) => probe(request, baseHeaders(beginRequest(request, undefined, false).id)) },
    ]),
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
async function adviseOnAdmins(store: VersionedStore, logger: Logger): Promise<void> {
  try {
    if ((await store.users.activeAdmins()) === 0)
      logger.warn(
        "no active administrator: make one on this box with `svc admin create --username <name> --email <address>`",
      );
  } catch (error) {
    logger.warn({ err: error }, "could not count administrators");
  }
}
