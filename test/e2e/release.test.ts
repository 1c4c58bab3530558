// `bun run release` builds a binary for each platform, @svc/client's tarball, and SHA256SUMS that match them.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import client from "../../client/package.json";
import { version } from "../../package.json";

const dir = mkdtempSync(join(tmpdir(), "svc-release-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The platform a binary's first bytes announce. */
function platformOf(bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  if (bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46) {
    return view.getUint16(18, true) === 0xb7
      ? "linux-arm64"
      : view.getUint16(18, true) === 0x3e
        ? "linux-x64"
        : "elf-other";
  }
  if (view.getUint32(0, true) === 0xfeedfacf)
    return view.getUint32(4, true) === 0x0100000c ? "darwin-arm64" : "macho-other";
  if (bytes[0] === 0x4d && bytes[1] === 0x5a) return "windows-x64";
  return "unknown";
}

test("builds linux-x64, linux-arm64, darwin-arm64 and windows-x64 binaries and the client's tarball with SHA-256 sums", async () => {
  const run = Bun.spawnSync([process.execPath, "run", "release"], {
    cwd: join(import.meta.dir, "..", ".."),
    env: { ...process.env, RELEASE_DIR: dir },
  });
  expect(run.exitCode).toBe(0);
  const expected = ["linux-x64", "linux-arm64", "darwin-arm64", "windows-x64"].map(
    (t) => `svc-${version}-${t}${t.startsWith("windows") ? ".exe" : ""}`,
  );
  const tarball = `svc-client-${client.version}.tgz`;
  expect(readdirSync(dir).sort()).toEqual([...expected, tarball, "SHA256SUMS"].sort());
  const sums = (await Bun.file(join(dir, "SHA256SUMS")).text()).trim().split("\n");
  expect(sums).toHaveLength(5);
  const [clientHash, clientName] = sums.at(-1)!.split("  ") as [string, string];
  expect(clientName).toBe(tarball);
  const packed = await Bun.file(join(dir, tarball)).bytes();
  expect(new Bun.CryptoHasher("sha256").update(packed).digest("hex")).toBe(clientHash);
  for (const line of sums.slice(0, -1)) {
    const [hash, name] = line.split("  ") as [string, string];
    const bytes = await Bun.file(join(dir, name)).bytes();
    expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(hash);
    expect(platformOf(bytes)).toBe(/svc-[^-]+-(.+?)(\.exe)?$/.exec(name)![1]!);
  }
}, 120_000);
