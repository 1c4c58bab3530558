// `bun run build`: compiles src/main.ts into the one binary, dist/svc (or the path given). Also what
// `bun run release` and the binary tests build with, so that all three make the same binary.
import { $ } from "bun";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ASSETS, gzipAsset } from "./assets.ts";
import { recordBytecodeOrder } from "./bytecode-order.ts";
import { COMPILE_FLAGS } from "./flags.ts";

const root = new URL("../..", import.meta.url).pathname;

export interface CompileOptions {
  /** Bun's target without its "bun-" (linux-arm64, ...); this machine's when none. */
  target?: string;
  /** The profile to lay the bytecode out by (bytecode-order.ts): recorded from a first build for this machine when not given; none when false. */
  order?: string | false;
}

/**
 * Builds the binary at `outfile`, carrying the gzipped assets (assets.ts) as embedded files. With code
 * splitting Bun also writes a source map file per chunk beside its output; the binary carries its
 * own, so the build runs in a scratch folder and only the binary leaves it.
 */
export async function compile(outfile: string, { target, order }: CompileOptions = {}): Promise<void> {
  if (order === undefined) {
    const recorded = await recordOrder();
    try {
      return await compile(outfile, { target, order: recorded.order });
    } finally {
      recorded.done();
    }
  }
  const scratch = mkdtempSync(join(tmpdir(), "svc-build-"));
  try {
    const assets = ASSETS.map((name) => join(scratch, `${name}.gz`));
    ASSETS.forEach((name, i) => writeFileSync(assets[i]!, gzipAsset(name)));
    const built = join(scratch, "svc");
    const targeted = target ? [`--target=bun-${target}`] : [];
    const ordered = order ? [`--bytecode-order=${order}`] : [];
    // The backup's worker thread is an entry point of its own, which src/backup/in-worker.ts finds by its
    // place under src/: the root, given, keeps that place whatever folder the build runs in.
    const src = join(root, "src");
    const entries = [join(src, "main.ts"), join(src, "backup", "snapshot-worker.ts")];
    await $`${process.execPath} build ${COMPILE_FLAGS} ${targeted} ${ordered} --define BUILT_AS_BINARY=true --root=${src} ${entries} ${assets} --outfile ${built}`.quiet();
    // Bun adds .exe for Windows targets.
    const output = target?.startsWith("windows") ? `${built}.exe` : built;
    await $`mkdir -p ${join(outfile, "..")}`;
    renameSync(output, outfile);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The profile for `compile`, recorded once for several targets (release.ts); removed by `done`. */
export async function recordOrder(): Promise<{ order: string; done(): void }> {
  const scratch = mkdtempSync(join(tmpdir(), "svc-profile-"));
  const done = () => rmSync(scratch, { recursive: true, force: true });
  try {
    const binary = join(scratch, "svc");
    await compile(binary, { order: false });
    return { order: await recordBytecodeOrder(binary, scratch), done };
  } catch (error) {
    done();
    throw error;
  }
}

if (import.meta.main) {
  const outfile = process.argv[2] ?? join(root, "dist", "svc");
  await compile(outfile);
  console.log(`built ${outfile} (${(Bun.file(outfile).size / 1e6).toFixed(1)} MB)`);
}
