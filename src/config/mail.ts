// Mail (SVC_SMTP_URL, SVC_MAIL_FROM, SVC_PUBLIC_URL, SVC_MAIL_KEEP, SVC_EMAIL_VERIFICATION,
// SVC_MAIL_PRODUCT_NAME, SVC_MAIL_TEMPLATES): where svc's mails go, who they are from, and the address the
// links in them point at (docs/mail.md).

import { loadTemplates, type TemplateOverrides } from "../mail/templates.ts";
import { ConfigError, duration, type Env, nonEmpty, oneOf, withoutCredentials } from "./values.ts";

export const EMAIL_VERIFICATION_MODES = ["off", "optional", "required"] as const;
export type EmailVerification = (typeof EMAIL_VERIFICATION_MODES)[number];

/** An SMTP server as SVC_SMTP_URL names it. */
export interface SmtpServer {
  host: string;
  port: number;
  /** smtps: TLS from the first byte (465 by default). */
  secure: boolean;
  /** smtp without tls=off: the server must offer STARTTLS, or nothing is sent. */
  requireTls: boolean;
  user: string | null;
  password: string | null;
}

/**
 * How mails leave svc. smtp: through that server. log: as one JSON log line each (development and test
 * without SVC_SMTP_URL). off: mail features are off (production without SVC_SMTP_URL).
 */
export type MailTransport = { kind: "smtp"; server: SmtpServer } | { kind: "log" } | { kind: "off" };

export interface MailConfig {
  transport: MailTransport;
  /** SVC_MAIL_FROM: the From of every mail; required with SMTP. */
  from: string;
  /** SVC_PUBLIC_URL: the origin (and path prefix, if any) users reach svc at, without a trailing slash. */
  publicUrl: string;
  /** SVC_MAIL_KEEP: how long a sent mail's row is kept before it is pruned. */
  keepSeconds: number;
  verification: EmailVerification;
  /** SVC_MAIL_PRODUCT_NAME: the name mails sign with. */
  productName: string;
  /** SVC_MAIL_TEMPLATES: a folder whose files override the built-in templates; null: the built-ins. */
  templatesDir: string | null;
  /** The templates SVC_MAIL_TEMPLATES replaces, read and checked at start (src/mail/templates.ts). */
  templates: TemplateOverrides;
  /** What `svc serve` warns of at start: a setting read but without effect. */
  warnings: string[];
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** SVC_SMTP_URL read: smtp://user:pass@host:587 (STARTTLS required), smtps://…:465, smtp://host:25?tls=off (loopback only). */
export function smtpServer(url: string): SmtpServer {
  const bad = (why: string) => new ConfigError("SVC_SMTP_URL", why, withoutCredentials(url));
  if (!URL.canParse(url))
    throw bad(
      "must be a URL such as smtp://user:password@mail.example.com:587 (in the user or password write / as %2F, @ as %40, % as %25)",
    );
  const parsed = new URL(url);
  const scheme = parsed.protocol.slice(0, -1);
  if (scheme !== "smtp" && scheme !== "smtps") throw bad(`must start with smtp:// or smtps://, not ${scheme}://`);
  if (!parsed.hostname) throw bad("must name a host");
  if (parsed.pathname !== "" && parsed.pathname !== "/") throw bad("must not have a path");
  const options = [...parsed.searchParams.keys()].filter((key) => key !== "tls");
  if (options.length > 0) throw bad(`has an unknown option: ${options[0]} (only tls=off is read)`);
  const tls = parsed.searchParams.get("tls");
  if (tls !== null && tls !== "off") throw bad(`tls may only be off, not ${tls}`);
  const secure = scheme === "smtps";
  if (tls === "off" && secure) throw bad("cannot be smtps:// with tls=off");
  if (tls === "off" && !LOOPBACK.has(parsed.hostname))
    throw bad(`may turn TLS off only for a loopback host (localhost, 127.0.0.1, ::1), not ${parsed.hostname}`);
  const port = parsed.port === "" ? (secure ? 465 : 587) : Number(parsed.port);
  const decoded = (text: string) => {
    try {
      return text === "" ? null : decodeURIComponent(text);
    } catch {
      throw bad("has a % in the user or password that is not percent-encoding (write % as %25)");
    }
  };
  const user = decoded(parsed.username);
  const password = decoded(parsed.password);
  if ((user === null) !== (password === null)) throw bad("must give both a user and a password, or neither");
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ""),
    port,
    secure,
    requireTls: !secure && tls !== "off",
    user,
    password,
  };
}

/** The origin users reach svc at, for links: http(s), no query or fragment, no trailing slash. */
function publicUrl(env: Env, required: boolean, fallback: string): string {
  const value = env.SVC_PUBLIC_URL;
  const bad = (why: string) => new ConfigError("SVC_PUBLIC_URL", why, value ?? "");
  if (value === undefined || value === "") {
    if (required)
      throw bad("is required with SVC_SMTP_URL: the address users reach svc at, which links in mails point at");
    return fallback;
  }
  if (!URL.canParse(value)) throw bad("must be a URL such as https://svc.example.com");
  const parsed = new URL(value);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw bad("must be an http:// or https:// URL");
  if (parsed.search || parsed.hash || parsed.username || parsed.password)
    throw bad("must not carry a query, a fragment or credentials");
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}

/** A mailbox as SMTP's MAIL FROM takes it: `a@b.c` or `Name <a@b.c>`. */
function mailFrom(env: Env, required: boolean, fallback: string): string {
  const value = env.SVC_MAIL_FROM;
  if (value === undefined || value === "") {
    if (required) throw new ConfigError("SVC_MAIL_FROM", "is required with SVC_SMTP_URL (the From of every mail)", "");
    return fallback;
  }
  const address = /<([^<>]+)>\s*$/.exec(value)?.[1] ?? value;
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(address.trim()) || /[\r\n]/.test(value))
    throw new ConfigError(
      "SVC_MAIL_FROM",
      'must be an address such as svc@example.com or "svc <svc@example.com>"',
      value,
    );
  return value.trim();
}

/** `port`: what svc listens on, for the links of mails logged in development without SVC_PUBLIC_URL. */
export function mail(env: Env, production: boolean, port: number): MailConfig {
  const url = env.SVC_SMTP_URL;
  const transport: MailTransport =
    url !== undefined && url !== ""
      ? { kind: "smtp", server: smtpServer(url) }
      : production
        ? { kind: "off" }
        : { kind: "log" };
  const on = transport.kind !== "off";
  const asked = oneOf(env, "SVC_EMAIL_VERIFICATION", EMAIL_VERIFICATION_MODES, on ? "optional" : "off");
  // Without mail, required would lock every unverified account out: a start-up error. Optional asks for
  // nothing to wait on a link, so it is off, said once at start.
  if (!on && asked === "required")
    throw new ConfigError(
      "SVC_EMAIL_VERIFICATION",
      "needs mail: set SVC_SMTP_URL (in production without it, mail is off)",
      asked,
    );
  const verification = on ? asked : "off";
  const warnings =
    asked !== verification
      ? [`SVC_EMAIL_VERIFICATION=${asked} is off: mail is off (no SVC_SMTP_URL in production), so no link can be sent`]
      : [];
  const templatesDir =
    env.SVC_MAIL_TEMPLATES === undefined || env.SVC_MAIL_TEMPLATES === "" ? null : env.SVC_MAIL_TEMPLATES;
  return {
    transport,
    from: mailFrom(env, transport.kind === "smtp", "svc@localhost"),
    publicUrl: publicUrl(env, transport.kind === "smtp", `http://localhost:${port}`),
    keepSeconds: duration(env, "SVC_MAIL_KEEP", "7d", 60, 365 * 86400),
    verification,
    productName: nonEmpty(env, "SVC_MAIL_PRODUCT_NAME", "svc"),
    templatesDir,
    templates: loadTemplates(templatesDir),
    warnings,
  };
}
