// `svc serve`: store (migrated) → app → listen; SIGTERM/SIGINT drain, close the database, exit 0.
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { describeDatabase, openStore } from "./db/open.ts";
import type { Store } from "./db/store.ts";
import { createLoggers } from "./log.ts";
import { describeError } from "./safe-errors.ts";
import { version } from "../package.json";
import type { Server } from "bun";

export async function serve(config: Config): Promise<void> {
  const loggers = createLoggers(config.logLevel);
  const { logger } = loggers;
  const database = describeDatabase(config.database);
  let store: Store;
  try {
    store = await openStore(config.database);
  } catch (error) {
    // Without its database svc can neither migrate nor serve; a supervisor restarts it once the database is back.
    console.error(`svc: cannot open the database ${database}: ${describeError(error)}`);
    process.exit(1);
  }

  let server: Server<unknown>;
  try {
    server = createApp({ config, store, loggers }).listen({
      hostname: config.host,
      port: config.port,
      reusePort: config.reusePort,
    });
  } catch (error) {
    await store.close();
    console.error(`svc: cannot listen on ${config.host}:${config.port}: ${listenProblem(error)}`);
    process.exit(1);
  }
  const address = `http://${server.hostname}:${server.port}`;
  logger.info({ version, environment: config.env, address, database }, "svc listening");
  if (config.jwt.ephemeral) logger.warn("SVC_JWT_SECRET is not set: a random secret is in use, so tokens end with this process");

  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "svc stopping: draining in-flight requests");
    const forced = setTimeout(() => {
      logger.warn({ grace_ms: config.shutdownGraceMs }, "grace period over: closing remaining connections");
      void server.stop(true);
    }, config.shutdownGraceMs);
    await server.stop();
    clearTimeout(forced);
    await store.close();
    logger.info("svc stopped");
    loggers.flush();
    process.exit(0);
  }

  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/** Why a socket could not be opened, in one line an operator can act on. */
function listenProblem(error: unknown): string {
  if ((error as { code?: unknown }).code === "EADDRINUSE") {
    return "the port is in use (another svc?); stop it, choose another SVC_PORT, or set SVC_REUSE_PORT=true to share the port on purpose";
  }
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}
