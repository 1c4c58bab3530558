// GET /svc/admin: the admin console, a page built into the binary (see assets.macro.ts), served with
// a strict Content-Security-Policy and refused to frames. It holds no power of its own: it calls svc's
// REST and GraphQL API, same origin, which checks every request. Its files are read on the first
// request for one (files.ts), not at start.
import { Elysia } from "elysia";
import { AppError } from "../errors/index.ts";
import { acceptsGzip } from "../http/accept-encoding.ts";
import type { ConsoleFile } from "./assets.macro.ts";

export const CONSOLE_PATH = "/svc/admin";

/**
 * Only the page's own scripts and styles (no inline script, no eval), data: for the colour input's
 * swatch, calls to svc itself; never inside a frame.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

/** A script or stylesheet of the console, with its body gzipped (on its first request) for browsers that take it. */
interface Asset extends ConsoleFile {
  gzipped?: Uint8Array<ArrayBuffer>;
}

interface Files {
  index: ConsoleFile;
  assets: Map<string, Asset>;
}

let files: Promise<Files> | undefined;

function loadFiles(): Promise<Files> {
  files ??= import("./files.ts").then(({ FILES }) => {
    const index = FILES.find((file) => file.name === "index.html");
    if (!index) throw new Error("the console's build has no index.html");
    return { index, assets: new Map(FILES.filter((file) => file !== index).map((file) => [file.name, file])) };
  });
  return files;
}

/** The console's files and their total size in bytes (the page's weight). */
export async function consoleWeight(): Promise<{ files: number; bytes: number }> {
  const { index, assets } = await loadFiles();
  const all = [index, ...assets.values()];
  return { files: all.length, bytes: all.reduce((sum, file) => sum + Buffer.byteLength(file.body), 0) };
}

export function consoleRoutes() {
  const page = async () => {
    const { index } = await loadFiles();
    return new Response(index.body, { headers: { ...SECURITY, "content-type": index.type } });
  };
  return new Elysia({ name: "svc/console" })
    .get(CONSOLE_PATH, page, { detail: { hide: true } })
    .get(`${CONSOLE_PATH}/`, page, { detail: { hide: true } })
    .get(
      `${CONSOLE_PATH}/:file`,
      async ({ params, request }) => {
        const file = (await loadFiles()).assets.get(params.file);
        if (!file) throw new AppError("not_found", "The console has no such file.");
        const headers = {
          ...SECURITY,
          "content-type": file.type,
          // Named by their content's hash: a new build has new names, so these never go stale.
          "cache-control": "public, max-age=31536000, immutable",
          vary: "Accept-Encoding",
        };
        if (!acceptsGzip(request.headers.get("accept-encoding"))) return new Response(file.body, { headers });
        // Once per file and process: packing takes milliseconds, and the script goes out at a third of its size.
        file.gzipped ??= Bun.gzipSync(file.body, { level: 9 }) as Uint8Array<ArrayBuffer>;
        return new Response(file.gzipped, { headers: { ...headers, "content-encoding": "gzip" } });
      },
      { detail: { hide: true } },
    );
}
