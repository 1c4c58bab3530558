// The public listener with TLS (src/process/reloadable-listener.ts): its socket is opened with SO_REUSEPORT, for the
// next certificate's to share, so "no other process holds the port" is checked first. Two svc starting
// at once must not both pass that check and both bind: the check and the bind are one step.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Listening, listen } from "../src/process/reloadable-listener.ts";
import type { TlsMaterial } from "../src/process/tls.ts";
import { freePort } from "./ports.ts";

let dir: string;
let tls: TlsMaterial;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-listening-"));
  const made = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"].concat([
      "-keyout",
      "key.pem",
      "-out",
      "cert.pem",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
    ]),
    { cwd: dir, stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(made.stderr.toString());
  const cert = await Bun.file(join(dir, "cert.pem")).text();
  const key = await Bun.file(join(dir, "key.pem")).text();
  tls = { cert, key, fingerprint: "", notAfter: "" };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const handlers = { routes: {}, fetch: () => new Response("svc") };

test("a second svc reaching the port between the first's check and its bind is refused (EADDRINUSE), not let in beside it", async () => {
  const port = await freePort();
  const settings = { hostname: "127.0.0.1", port, reusePort: false, maxBodyBytes: 1024, logger: console };
  let second: Listening | undefined;
  let refused: unknown;
  const first = listen(settings, handlers, undefined, tls, () => {
    // What another process starting at this moment does: its own check, then its own bind.
    try {
      second = listen(settings, handlers, undefined, tls);
    } catch (error) {
      refused = error;
    }
  });
  try {
    expect(second).toBeUndefined();
    expect((refused as { code?: string }).code).toBe("EADDRINUSE");
    expect(first.server.port).toBe(port);
    // Once the first listens, the next one's check finds it.
    expect(() => listen(settings, handlers, undefined, tls)).toThrow();
  } finally {
    await second?.stop(true);
    await first.stop(true);
  }
});
