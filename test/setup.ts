// Preloaded by bunfig.toml: tests see none of the developer's SVC_* settings; each builds its own config.
import { afterAll } from "bun:test";
import { releaseSharedDatabase } from "./helpers.ts";

for (const name of Object.keys(process.env)) {
  if (name.startsWith("SVC_")) delete process.env[name];
}

// A preloaded afterAll runs once, after every file: the shared PostgreSQL database goes then.
afterAll(releaseSharedDatabase);
