// `svc serve`: store (migrated) → app → listen; SIGTERM, SIGINT and SIGHUP drain, close the database, exit 0.
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { describeDatabase, openStore } from "./db/open.ts";
import type { VersionedStore } from "./db/store.ts";
import type { Logger } from "./log.ts";
import { startPruning, storeJobs } from "./pruning.ts";
import { createLoggers } from "./log.ts";
import { describeError } from "./safe-errors.ts";
import { version } from "../package.json";
import type { Server } from "bun";

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

  const app = createApp({ config, store, loggers });
  let server: Server<unknown>;
  try {
    server = app.listen({
      hostname: config.host,
      port: config.port,
      reusePort: config.reusePort,
    });
  } catch (error) {
    await store.close();
    console.error(`svc: cannot listen on ${config.host}:${config.port}: ${listenProblem(error)}`);
    process.exit(1);
  }
  const stopPruning = startPruning({ jobs: storeJobs(store, config.auditRetentionSeconds), logger });
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
    await app.closeStreams();
    await server.stop();
    clearTimeout(forced);
    await stopPruning();
    await store.close();
    logger.info("svc stopped");
    loggers.flush();
    process.exit(0);
  };
  if (early) void shutdown(early);
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
