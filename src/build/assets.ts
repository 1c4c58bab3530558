// The files svc serves from inside its binary, gzipped: GraphiQL's page (rendered here, with svc's
// settings) and Swagger UI's two files. compile.ts writes them beside the build and embeds them as
// files, which the binary reads on their first request (src/http/embedded.ts); run from source, svc
// makes them here on first request instead. Embedded as files they are stored once, as bytes: a
// bundle would hold a string of them twice (its source and its bytecode), in base64.
import { readFileSync } from "node:fs";
import { renderGraphiQL } from "@graphql-yoga/render-graphiql";

export const ASSETS = ["graphiql.html", "swagger-ui-bundle.js", "swagger-ui.css"] as const;
export type AssetName = (typeof ASSETS)[number];

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

/** The asset's bytes, gzipped at level 9. */
export function gzipAsset(name: AssetName): Uint8Array<ArrayBuffer> {
  const plain =
    name === "graphiql.html"
      ? new TextEncoder().encode(
          renderGraphiQL({
            endpoint: "/graphql",
            title: "svc GraphQL playground",
            defaultEditorToolsVisibility: "headers",
            headers: JSON.stringify({ Authorization: "Bearer <token>" }, null, 2),
            defaultQuery: HINT,
            // The token stays out of localStorage.
            shouldPersistHeaders: false,
          }),
        )
      : new Uint8Array(readFileSync(Bun.resolveSync(`swagger-ui-dist/${name}`, import.meta.dir)));
  return Bun.gzipSync(plain, { level: 9 }) as Uint8Array<ArrayBuffer>;
}
