// Entry point: config → store (migrated) → app → listen; SIGTERM/SIGINT drain and exit 0.
import { createApp } from "./app.ts";
import { ConfigError, parseConfig, type Config } from "./config.ts";
import { describeDatabase, openStore } from "./db/open.ts";
import { createLogger } from "./log.ts";
import { version } from "../package.json";

function loadConfig(): Config {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`svc: ${error.message}`);
    process.exit(2);
  }
}

const config = loadConfig();
const logger = createLogger(config.logLevel);
const store = await openStore(config.database);
const app = createApp({ config, store, logger }).listen({
  hostname: config.host,
  port: config.port,
  // The app answers oversized bodies with problem+json; this is Bun's own backstop (a bare 413) for
  // bodies it must not even buffer, such as a chunked GraphQL request far past the limit.
  maxRequestBodySize: config.maxBodyBytes * 2,
});

logger.info(
  { version, environment: config.env, address: `http://${app.server?.hostname}:${app.server?.port}`, database: describeDatabase(config.database) },
  "svc listening",
);
if (config.jwt.ephemeral) logger.warn("SVC_JWT_SECRET is not set: a random secret is in use, so tokens end with this process");

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "svc stopping: draining in-flight requests");
  const forced = setTimeout(() => {
    logger.warn({ grace_ms: config.shutdownGraceMs }, "grace period over: closing remaining connections");
    void app.server?.stop(true);
  }, config.shutdownGraceMs);
  await app.stop();
  clearTimeout(forced);
  await store.close();
  logger.info("svc stopped");
  logger.flush();
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
