// `bun run release`: cross-compiles the binary for every supported platform into dist/ (or
// RELEASE_DIR), packs @svc/client's tarball beside them, and writes SHA256SUMS of them all. A build
// script, never imported by the service.
import { mkdir } from "node:fs/promises";
import { version } from "../../package.json";
import { packClient } from "./client-package.ts";
import { compile, recordOrder } from "./compile.ts";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-arm64", "windows-x64"] as const;

const root = new URL("../..", import.meta.url).pathname;
const dist = process.env.RELEASE_DIR ?? `${root}dist`;
await mkdir(dist, { recursive: true });

const lines: string[] = [];
/** Adds the file's line to SHA256SUMS. */
async function sum(name: string): Promise<void> {
  const file = Bun.file(`${dist}/${name}`);
  lines.push(`${new Bun.CryptoHasher("sha256").update(await file.arrayBuffer()).digest("hex")}  ${name}`);
  console.log(`${name}  ${(file.size / 1e6).toFixed(1)} MB`);
}
// One profile for every target: it names functions by a hash of their syntax, the same on each.
const { order, done } = await recordOrder();
try {
  for (const target of TARGETS) {
    const name = `svc-${version}-${target}${target.startsWith("windows") ? ".exe" : ""}`;
    await compile(`${dist}/${name}`, { target, order });
    await sum(name);
  }
} finally {
  done();
}
await sum(packClient(dist));
await Bun.write(`${dist}/SHA256SUMS`, `${lines.join("\n")}\n`);
console.log(`wrote ${dist}/SHA256SUMS (check with: cd dist && sha256sum -c SHA256SUMS)`);
