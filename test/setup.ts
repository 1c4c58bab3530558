// Preloaded by bunfig.toml: tests see none of the developer's SVC_* settings; each builds its own config.
import { afterAll, setDefaultTimeout } from "bun:test";
import { releaseSharedDatabase } from "./helpers.ts";

for (const name of Object.keys(process.env)) {
  if (name.startsWith("SVC_")) delete process.env[name];
}

// bunfig.toml's [test] timeout is not applied by Bun 1.4.5 (a test past 5 s failed whatever it said): set
// here, where it is. Tests that wait on a loaded machine (a process starting, a build) need the room.
setDefaultTimeout(30_000);

// A preloaded afterAll runs once, after every file: the shared PostgreSQL database goes then.
afterAll(releaseSharedDatabase);
