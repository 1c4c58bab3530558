// GraphQL at /graphql: any document, typed when it is a typed document (graphql-codegen's
// TypedDocumentNode or TypedDocumentString), with svc's errors as SvcError.
import type { Auth } from "./auth.js";
import { graphqlError, type GraphQLErrorEntry, problemError, unexpectedAnswer } from "./errors.js";

/**
 * What a typed document carries: @graphql-typed-document-node/core's DocumentTypeDecoration, declared
 * here by its shape so that the client needs no package for it.
 */
export interface DocumentTypeDecoration<Result, Variables> {
  __apiType?: (variables: Variables) => Result;
}

/** A parsed document (graphql-js's DocumentNode), as far as the client reads it. */
export interface DocumentNodeLike {
  readonly kind: string;
  readonly definitions: ReadonlyArray<unknown>;
  readonly loc?: { readonly source: { readonly body: string } } | undefined;
}

export type TypedDocument<Result, Variables> = DocumentTypeDecoration<Result, Variables> &
  (string | String | DocumentNodeLike);

export type Document = string | String | DocumentNodeLike;

/** A document that carries no types (so that a typed one never falls back to untyped variables). */
export type UntypedDocument = (string | DocumentNodeLike) & { __apiType?: undefined };

export type ResultOf<D> = D extends DocumentTypeDecoration<infer R, unknown> ? R : unknown;
export type VariablesOf<D> = D extends DocumentTypeDecoration<unknown, infer V> ? V : Record<string, unknown>;

export interface GraphQLRequestOptions {
  signal?: AbortSignal;
}

/**
 * What follows a typed document: its variables, required when the document has a required one (a `$id: ID!`
 * without a default), so that leaving them out fails to compile rather than at svc; then the options.
 */
export type GraphQLArguments<Variables> =
  // {} extends it: no key is required.
  {} extends Variables
    ? [variables?: Variables, options?: GraphQLRequestOptions]
    : [variables: Variables, options?: GraphQLRequestOptions];

/** The document's text: as given, or printed (graphql-js, loaded only for a parsed document without its source). */
export async function documentText(document: Document): Promise<string> {
  if (typeof document === "string") return document;
  if (document instanceof String) return document.toString();
  if (document.loc?.source.body) return document.loc.source.body;
  // A bundler keeps this optional import out of builds that never reach it.
  const { print } = (await import("graphql")) as { print(document: unknown): string };
  return print(document);
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: GraphQLErrorEntry[];
}

/** Runs one query or mutation; throws SvcError when the answer has any error. */
export async function runGraphQL<T>(
  auth: Auth,
  document: Document,
  variables: object | undefined,
  options: GraphQLRequestOptions = {},
): Promise<T> {
  const query = await documentText(document);
  const response = await auth.authorized({
    method: "POST",
    path: "/graphql",
    body: variables === undefined ? { query } : { query, variables },
    headers: { accept: "application/graphql-response+json, application/json" },
    signal: options.signal,
  });
  const type = response.headers.get("content-type") ?? "";
  // Refused before GraphQL ran (a body too large, a proxy's page): problem details, or unexpected_response.
  if (type.includes("problem+json") || !type.includes("json")) throw await problemError(response);
  let answer: GraphQLAnswer<T> | null = null;
  try {
    answer = (await response.json()) as GraphQLAnswer<T>;
  } catch {
    answer = null;
  }
  if (answer?.errors?.length) throw graphqlError(answer.errors, response);
  if (!answer || answer.data === undefined || answer.data === null) {
    throw unexpectedAnswer(response, `GraphQL answer without data (HTTP ${response.status})`);
  }
  return answer.data;
}
