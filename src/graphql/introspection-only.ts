// Whether a request asks for the schema and nothing else. While introspection is allowed the schema is
// public anyway (GET /graphql/schema.graphql), so such a request needs no token: GraphiQL loads the
// schema when it opens, before anyone has pasted a token into its headers pane.
import { Kind, parse } from "graphql";

/** Only names that introspect: `__typename` alone (common in client queries) is not a reason to parse. */
const INTROSPECTS = /__(?:schema|type)\b/;

/** True for a GET or POST (body as text) whose query asks for the schema alone. */
export function asksForSchemaOnly(request: Request, body: string | undefined): boolean {
  // Looked for in the raw text first (a GET's query is in the URL), so other requests cost one scan.
  return INTROSPECTS.test(body ?? request.url) && introspectionOnly(queryOf(request, body));
}

function introspectionOnly(query: string | null): boolean {
  if (query === null || !INTROSPECTS.test(query)) return false;
  let document;
  try {
    document = parse(query, { maxTokens: 5000 });
  } catch {
    return false;
  }
  return document.definitions.every(
    (definition) =>
      definition.kind === Kind.FRAGMENT_DEFINITION ||
      (definition.kind === Kind.OPERATION_DEFINITION &&
        definition.operation === "query" &&
        definition.selectionSet.selections.every(
          (selection) => selection.kind === Kind.FIELD && selection.name.value.startsWith("__"),
        )),
  );
}

/** The `query` of a GraphQL request: the URL's for GET, the JSON body's for POST; null when there is none. */
function queryOf(request: Request, body: string | undefined): string | null {
  if (body === undefined) return new URL(request.url).searchParams.get("query");
  try {
    const parsed: unknown = JSON.parse(body);
    const query = parsed && typeof parsed === "object" && "query" in parsed ? parsed.query : null;
    return typeof query === "string" ? query : null;
  } catch {
    return null;
  }
}
