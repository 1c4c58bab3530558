// CORS through @elysiajs/cors, and only for the origins SVC_CORS_ORIGINS lists: closed by default.
import { cors } from "@elysiajs/cors";
import { Elysia } from "elysia";

export function corsFor(origins: string[]) {
  if (origins.length === 0) return new Elysia({ name: "svc/cors-closed" });
  return cors({
    origin: origins,
    methods: ["GET", "POST", "PUT", "DELETE"],
    allowedHeaders: ["authorization", "content-type", "x-request-id"],
    exposeHeaders: ["location", "link", "x-request-id", "retry-after", "www-authenticate"],
    credentials: false,
    maxAge: 600,
  });
}
