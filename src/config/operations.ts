// How svc is reached: TLS, the operations listener and the metrics token (src/http/exposure.ts says who
// sees what), the proxies in front of it and the origins a browser may call it from.

import { ConfigError, type Env, integer } from "./values.ts";

export interface TlsFiles {
  /** The certificate, or the chain (the certificate first), PEM. */
  certPath: string;
  /** Its private key, PEM, unencrypted. */
  keyPath: string;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** TLS, the operations listener and the metrics token. */
export function operations(
  env: Env,
  portVar: string,
): { tls: TlsFiles | null; opsAddress: ListenAddress | null; metricsToken: string | null } {
  const port = integer(env, portVar, 8080, 0, 65535);
  return { tls: tlsFiles(env), opsAddress: opsAddress(env, port), metricsToken: metricsToken(env) };
}

/** Both paths or neither; whether the files are there and fit is for start-up to find (src/process/tls.ts). */
function tlsFiles(env: Env): TlsFiles | null {
  const certPath = env.SVC_TLS_CERT || undefined;
  const keyPath = env.SVC_TLS_KEY || undefined;
  if (certPath === undefined && keyPath === undefined) return null;
  if (certPath === undefined || keyPath === undefined) {
    const [missing, what, given] =
      certPath === undefined ? ["SVC_TLS_CERT", "certificate", "SVC_TLS_KEY"] : ["SVC_TLS_KEY", "key", "SVC_TLS_CERT"];
    throw new ConfigError(missing, `a PEM ${what} file, required when ${given} is set (both or neither)`, "");
  }
  return { certPath, keyPath };
}

/** host:port ([v6]:port), on another port than the public listener's. */
function opsAddress(env: Env, publicPort: number): ListenAddress | null {
  const value = env.SVC_OPS_ADDRESS;
  if (value === undefined || value === "") return null;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535)
    throw new ConfigError("SVC_OPS_ADDRESS", "host:port, such as 127.0.0.1:9090 or [::1]:9090", value);
  if (port !== 0 && port === publicPort)
    throw new ConfigError("SVC_OPS_ADDRESS", `a port other than the public listener's (${publicPort})`, value);
  return { host: match[1] ?? match[2]!, port };
}

/** Sent in a header, compared in constant time: printable ASCII without spaces, long enough not to be guessed. */
function metricsToken(env: Env): string | null {
  const value = env.SVC_METRICS_TOKEN;
  if (value === undefined || value === "") return null;
  if (!/^[\x21-\x7e]{24,}$/.test(value))
    throw new ConfigError(
      "SVC_METRICS_TOKEN",
      "at least 24 printable ASCII characters without spaces; make one with: openssl rand -base64 32",
      `${value.length} characters`,
    );
  return value;
}

export function trustProxy(env: Env): number {
  const value = env.SVC_TRUST_PROXY;
  if (value === undefined || value === "" || value === "false") return 0;
  if (value === "true") return 1;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  throw new ConfigError("SVC_TRUST_PROXY", "false, true (one proxy) or the number of proxies in front of svc", value);
}

export function origins(env: Env): string[] {
  const value = env.SVC_CORS_ORIGINS;
  if (value === undefined || value.trim() === "") return [];
  const list = value
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of list) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(
        "SVC_CORS_ORIGINS",
        "a comma-separated list of origins such as https://app.example.com",
        origin,
      );
    }
  }
  return list;
}
