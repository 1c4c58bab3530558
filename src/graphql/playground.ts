// GraphiQL, served whole from inside the binary: the page needs nothing from the internet. It opens
// with an Authorization template in its headers pane and a hint in its editor, keeps headers (the
// token) out of localStorage (see playground.macro.ts), and goes out gzipped and cacheable: 9 MB that
// change only with svc.
import { version } from "../../package.json";
import { graphiqlGzipBase64 } from "./playground.macro.ts" with { type: "macro" };

export interface PlaygroundPage {
  html: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  etag: string;
}

let page: PlaygroundPage | undefined;

/**
 * The page, gzipped inside the binary (rendered at bundle time: playground.macro.ts) and unpacked on
 * its first request. `endpoint` must be the GraphQL path the page was rendered for.
 */
export function playgroundPage(endpoint: string): PlaygroundPage {
  if (endpoint !== "/graphql") throw new Error(`the playground is rendered for /graphql, not ${endpoint}`);
  if (!page) {
    const gzip = new Uint8Array(Buffer.from(graphiqlGzipBase64("/graphql"), "base64"));
    const html = Bun.gunzipSync(gzip) as Uint8Array<ArrayBuffer>;
    page = { html, gzip, etag: `"${version}-${Bun.hash(html).toString(36)}"` };
  }
  return page;
}

/** The page as an answer: gzipped when the client takes it, 304 when it has this version already. */
export async function playgroundResponse(request: Request, endpoint: string): Promise<Response> {
  const { html, gzip, etag } = playgroundPage(endpoint);
  const headers: Record<string, string> = {
    "content-type": "text/html; charset=utf-8",
    // Revalidated after a day; a new svc version is a new ETag.
    "cache-control": "public, max-age=86400",
    etag,
    vary: "Accept-Encoding",
  };
  if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
    return new Response(gzip, { headers: { ...headers, "content-encoding": "gzip" } });
  }
  return new Response(html, { headers });
}
