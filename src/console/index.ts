// GET /svc/admin: the admin console, a page built into the binary (see assets.macro.ts), served with
// a strict Content-Security-Policy and refused to frames. It holds no power of its own: it calls svc's
// REST and GraphQL API, same origin, which checks every request.
import { Elysia } from "elysia";
import { AppError } from "../errors.ts";
import { consoleFiles } from "./assets.macro.ts" with { type: "macro" };

export const CONSOLE_PATH = "/svc/admin";

const FILES = consoleFiles("/svc/admin");

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

/** The console's files and their total size in bytes (the page's weight). */
export function consoleWeight(): { files: number; bytes: number } {
  return { files: FILES.length, bytes: FILES.reduce((sum, file) => sum + Buffer.byteLength(file.body), 0) };
}

export function consoleRoutes() {
  const index = FILES.find((file) => file.name === "index.html");
  if (!index) throw new Error("the console's build has no index.html");
  const assets = new Map(FILES.filter((file) => file !== index).map((file) => [file.name, file]));
  const page = () => new Response(index.body, { headers: { ...SECURITY, "content-type": index.type } });
  return new Elysia({ name: "svc/console" })
    .get(CONSOLE_PATH, page, { detail: { hide: true } })
    .get(`${CONSOLE_PATH}/`, page, { detail: { hide: true } })
    .get(
      `${CONSOLE_PATH}/:file`,
      ({ params }) => {
        const file = assets.get(params.file);
        if (!file) throw new AppError("not_found", "The console has no such file.");
        // Named by their content's hash: a new build has new names, so these never go stale.
        return new Response(file.body, {
          headers: { ...SECURITY, "content-type": file.type, "cache-control": "public, max-age=31536000, immutable" },
        });
      },
      { detail: { hide: true } },
    );
}
