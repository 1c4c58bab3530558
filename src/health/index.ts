// GET /svc/health: who is answering, and whether the database answers too. For orchestrators,
// /svc/health/live (the process is up) and /svc/health/ready (the database answers).
import { Elysia } from "elysia";
import type { Store } from "../db/store.ts";
import { version } from "../../package.json";

const PING_TIMEOUT_MS = 2000;

export function healthRoutes(store: Store, environment: string) {
  const startedAt = performance.now();
  return new Elysia({ name: "svc/health" })
    .get("/svc/health/live", () => ({ status: "ok" }))
    .get("/svc/health/ready", async ({ set }) => {
      const database = await check(store);
      set.status = database === "ok" ? 200 : 503;
      return { status: database === "ok" ? "ok" : "unavailable", checks: { database } };
    })
    .get("/svc/health", async ({ set }) => {
      const database = await check(store);
      set.status = database === "ok" ? 200 : 503;
      return {
        service: "svc",
        version,
        environment,
        status: database === "ok" ? "ok" : "unavailable",
        uptime_s: Math.round((performance.now() - startedAt) / 100) / 10,
        checks: { database },
      };
    });
}

async function check(store: Store): Promise<"ok" | "unavailable"> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("database ping timed out")), PING_TIMEOUT_MS);
  });
  try {
    await Promise.race([store.ping(), timeout]);
    return "ok";
  } catch {
    return "unavailable";
  } finally {
    clearTimeout(timer);
  }
}
