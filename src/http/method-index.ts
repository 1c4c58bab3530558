// Which methods a path answers to, so an unknown method on a known path is 405 with Allow.

export interface Route {
  method: string;
  path: string;
}

export function methodIndex(routes: readonly Route[]): (path: string) => string[] {
  // ALL and OPTIONS (CORS preflight, mounted on every path) say nothing about what a path is for.
  const patterns = routes
    .filter((r) => r.method !== "ALL" && r.method !== "OPTIONS")
    .map((r) => ({ method: r.method, regex: routeRegex(r.path) }));
  return (path) => [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))].sort();
}

function routeRegex(path: string): RegExp {
  const body = path
    .replace(/\/+$/, "")
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part === "*" ? ".*" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}
