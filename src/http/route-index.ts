// Which route template a request matched (for metrics and the access line, where ids in paths would
// make a label per user) and which methods a path answers to (so an unknown method on a known path is
// 405 with Allow): both asked of Elysia's own router, so nothing matches paths but Elysia.

/**
 * What is read of Elysia's router (`app.router`): the routes as mounted, the table of paths without
 * parameters (path → method → route number) and the tree that matches the others. Public fields of
 * Elysia 1.4, if not described in its documentation; test/api/front-door.test.ts holds them to it.
 */
export interface ElysiaRouter {
  history: ReadonlyArray<{ method: string; path: string }>;
  static: Record<string, Record<string, number> | undefined>;
  http: { find(method: string, path: string): { store: unknown } | null };
}

export interface RouteIndex {
  /** The template a request is answered by, such as /svc-api/v1/users/:user_id; undefined when none. */
  template(method: string, path: string): string | undefined;
  /** The methods a path answers to, sorted. */
  methodsFor(path: string): string[];
}

/** Built once every route is mounted. */
export function routeIndex(router: ElysiaRouter): RouteIndex {
  // ALL and OPTIONS (CORS preflight, mounted on every path) say nothing about what a path is for.
  const real = router.history.filter((route) => route.method !== "ALL" && route.method !== "OPTIONS");
  const methods = [...new Set(real.map((route) => route.method))].sort();
  // The router's tree hands back a route's handler, not its template: each template is found by asking
  // for a path only that route answers. A path with parameters answers itself (its ":name" segments are
  // parameters like any other); a wildcard needs a path deeper than any other route reaches.
  const templates = new Map<unknown, string>();
  const deeper = Array.from({ length: Math.max(...real.map((route) => route.path.split("/").length)) }, () => "x");
  const dynamic = real.filter((route) => /[:*]/.test(route.path));
  const wildcardsLast = [
    ...dynamic.filter((r) => !r.path.endsWith("*")),
    ...dynamic.filter((r) => r.path.endsWith("*")),
  ];
  for (const { method, path } of wildcardsLast) {
    const probe = path.endsWith("*") ? `${path.slice(0, -1)}${deeper.join("/")}` : path;
    const found = router.http.find(method, probe);
    if (found && !templates.has(found.store)) templates.set(found.store, path);
  }

  function template(method: string, path: string): string | undefined {
    const index = (router.static[path] ?? router.static[trimSlash(path)])?.[method];
    if (index !== undefined) return router.history[index]?.path;
    const found = router.http.find(method, path);
    return found ? templates.get(found.store) : undefined;
  }

  return {
    template,
    methodsFor: (path) => methods.filter((method) => template(method, path) !== undefined),
  };
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
