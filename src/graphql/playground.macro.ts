// Runs at bundle time (imported `with { type: "macro" }`): GraphiQL's page rendered once and gzipped,
// handed to the bundle as base64 text. The binary then carries a 2.5 MB compressed page instead of
// render-graphiql's 9 MB of JavaScript (and its bytecode), which nothing at run time needs.
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";

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

/** The page for `endpoint`, gzipped at level 9, in base64. */
export function graphiqlGzipBase64(endpoint: string): string {
  const html = renderGraphiQL({
    endpoint,
    title: "svc GraphQL playground",
    defaultEditorToolsVisibility: "headers",
    headers: JSON.stringify({ Authorization: "Bearer <token>" }, null, 2),
    defaultQuery: HINT,
    shouldPersistHeaders: false,
  });
  return Buffer.from(Bun.gzipSync(new TextEncoder().encode(html), { level: 9 })).toString("base64");
}
