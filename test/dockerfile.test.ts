// The Dockerfile cannot be built where no Docker engine runs (as on svc's CI machines); this holds it
// to its promises statically: multi-stage, pinned bases, non-root, the binary alone, a HEALTHCHECK.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const lines = (await Bun.file(join(root, "Dockerfile")).text())
  .replace(/\\\n\s*/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const stages = lines.filter((l) => l.startsWith("FROM "));
const final = lines.slice(lines.lastIndexOf(stages.at(-1)!));

test("builds in one stage and runs from another, on pinned base images", () => {
  expect(stages).toHaveLength(2);
  expect(stages[0]).toBe("FROM oven/bun:1.4.5 AS build");
  for (const stage of stages) expect(stage).not.toMatch(/:latest\b/);
  expect(stages[1]).toMatch(/^FROM gcr\.io\/distroless\/cc-debian12:nonroot$/);
});

test("the build stage copies only files that exist, and builds with the project's own script", async () => {
  for (const line of lines.filter((l) => l.startsWith("COPY ") && !l.includes("--from"))) {
    const sources = line.split(/\s+/).slice(1, -1);
    for (const source of sources)
      expect({ source, exists: existsSync(join(root, source)) }).toEqual({ source, exists: true });
  }
  const pkg = await Bun.file(join(root, "package.json")).json();
  expect(lines).toContain("RUN bun run build && mkdir -p /data");
  expect(pkg.scripts.build).toBe("bun src/build/compile.ts");
  expect(await Bun.file(join(root, "src", "build", "compile.ts")).text()).toContain('join(root, "dist", "svc")');
});

test("the final stage holds the binary alone, runs it as non-root, and checks its health", () => {
  expect(final.filter((l) => l.startsWith("COPY"))).toEqual([
    "COPY --from=build /src/dist/svc /usr/local/bin/svc",
    "COPY --from=build --chown=nonroot:nonroot /data /data",
  ]);
  expect(final).toContain("USER nonroot");
  expect(final.find((l) => l.startsWith("HEALTHCHECK"))).toContain('CMD ["/usr/local/bin/svc", "healthcheck"]');
  expect(final).toContain('ENTRYPOINT ["/usr/local/bin/svc"]');
  expect(final.find((l) => l.startsWith("ENV"))).toContain("SVC_DATABASE_URL=sqlite:/data/svc.db");
});
