// The @svc/client package a release ships beside the binaries: built by its own prepack
// (client/scripts/build.ts) and packed with the files npm pack would take, by `bun pm pack`. A build
// script, never imported by the service.
import { join, resolve } from "node:path";

const CLIENT = join(import.meta.dir, "../../client");

/** Writes the client's tarball (svc-client-<version>.tgz) into `dir`; answers its file name. */
export function packClient(dir: string): string {
  // Resolved here: bun pm pack runs in client/, where a relative RELEASE_DIR would name another folder.
  const packed = Bun.spawnSync([process.execPath, "pm", "pack", "--destination", resolve(dir), "--quiet"], {
    cwd: CLIENT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines = packed.stdout.toString().trim().split("\n");
  const name = lines.at(-1)?.trim().split("/").at(-1);
  if (packed.exitCode !== 0 || !name?.endsWith(".tgz")) {
    throw new Error(`packing @svc/client failed (exit ${packed.exitCode}):\n${packed.stderr}${packed.stdout}`);
  }
  return name;
}
