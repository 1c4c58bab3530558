// GraphiQL, served whole from inside the binary: the page needs nothing from the internet.
let page: Promise<string> | undefined;

/** The page, rendered once; the 9 MB bundle is loaded on first request, not at start-up. */
export function playgroundPage(endpoint: string): Promise<string> {
  page ??= import("@graphql-yoga/render-graphiql").then(({ renderGraphiQL }) =>
    renderGraphiQL({ endpoint, title: "svc GraphQL playground", defaultEditorToolsVisibility: "headers" }),
  );
  return page;
}
