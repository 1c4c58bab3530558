// GraphiQL, served whole from inside the binary: the page needs nothing from the internet. It opens
// with an Authorization template in its headers pane and a hint in its editor, keeps headers (the
// token) out of localStorage, and goes out gzipped and cacheable: 9 MB that change only with svc.
import { version } from "../../package.json";

export interface PlaygroundPage {
  html: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  etag: string;
}

const HINT = `# Queries need a token (unless SVC_GRAPHQL_AUTH says otherwise).
# Get one from  POST /svc-api/v1/auth/login
#   {"username": "…", "password": "…"}
# and put it in place of <token> in the Headers pane below.

{
  categories {
    id
    name
    colorHex
  }
}
`;

let page: Promise<PlaygroundPage> | undefined;

/** The page, rendered and compressed once; the 9 MB bundle is loaded on first request, not at start-up. */
export function playgroundPage(endpoint: string): Promise<PlaygroundPage> {
  page ??= import("@graphql-yoga/render-graphiql").then(({ renderGraphiQL }) => {
    const html = new TextEncoder().encode(
      renderGraphiQL({
        endpoint,
        title: "svc GraphQL playground",
        defaultEditorToolsVisibility: "headers",
        headers: JSON.stringify({ Authorization: "Bearer <token>" }, null, 2),
        defaultQuery: HINT,
        shouldPersistHeaders: false,
      }),
    );
    const etag = `"${version}-${Bun.hash(html).toString(36)}"`;
    return { html, gzip: Bun.gzipSync(html, { level: 9 }), etag };
  });
  return page;
}

/** The page as an answer: gzipped when the client takes it, 304 when it has this version already. */
export async function playgroundResponse(request: Request, endpoint: string): Promise<Response> {
  const { html, gzip, etag } = await playgroundPage(endpoint);
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
