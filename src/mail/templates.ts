// Mail templates: the built-in ones (built-in.ts), any of which a file in the SVC_MAIL_TEMPLATES folder
// replaces. A file is named `<kind>.subject.txt`, `<kind>.text.txt` or `<kind>.html`, and uses
// `{{variable}}` placeholders (`{{ product }}` alike); in .html every variable is HTML-escaped. The folder
// is read once at start and every file checked then (its name, its placeholders, a trial rendering), so a
// mistake stops start-up with one line naming the file rather than failing a mail later.
import { ConfigError } from "../config/values.ts";
import type { MailKind } from "../db/mail-outbox.ts";
import { nodeFs } from "../process/node-fs.ts";
import { BUILT_IN, type TemplatePart, type Templates, VARIABLES } from "./built-in.ts";

/** The templates a folder replaces, by kind and part; what it does not name stays built in. */
export type TemplateOverrides = Partial<Record<MailKind, Partial<Record<TemplatePart, string>>>>;

const PARTS: Record<string, TemplatePart> = { "subject.txt": "subject", "text.txt": "text", html: "html" };
const KINDS = Object.keys(VARIABLES) as MailKind[];
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
/** The most a template may hold: a mail, not a document. */
const MAX_BYTES = 256 * 1024;

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The template with its placeholders filled in: escaped for HTML, and the subject kept to one line. */
export function render(template: string, part: TemplatePart, variables: Record<string, string | undefined>): string {
  const filled = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = variables[name] ?? "";
    if (part === "html") return escapeHtml(value);
    return part === "subject" ? value.replace(/[\r\n]+/g, " ") : value;
  });
  return part === "subject" ? filled.trim() : filled;
}

/** The built-in templates with the overrides laid over them. */
export function templatesWith(overrides: TemplateOverrides): Templates {
  return Object.fromEntries(KINDS.map((kind) => [kind, { ...BUILT_IN[kind], ...overrides[kind] }])) as Templates;
}

/** Reads and checks the folder's templates; a ConfigError naming SVC_MAIL_TEMPLATES and the file otherwise. */
export function loadTemplates(dir: string | null): TemplateOverrides {
  if (dir === null) return {};
  const fs = nodeFs();
  const bad = (why: string, file: string) => new ConfigError("SVC_MAIL_TEMPLATES", why, file);
  let names: string[];
  try {
    if (!fs.statSync(dir).isDirectory()) throw bad("must be a folder of mail templates", dir);
    names = fs.readdirSync(dir).sort();
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw bad("must be a folder of mail templates that svc can read", dir);
  }
  const overrides: TemplateOverrides = {};
  for (const name of names) {
    const path = `${dir.replace(/\/+$/, "")}/${name}`;
    if (name.startsWith(".")) continue;
    const dot = name.indexOf(".");
    const kind = name.slice(0, dot) as MailKind;
    const part = PARTS[name.slice(dot + 1)];
    if (dot < 0 || !KINDS.includes(kind) || !part)
      throw bad(
        `${name} is not a template's name: <kind>.subject.txt, <kind>.text.txt or <kind>.html, kind one of ${KINDS.join(", ")}`,
        path,
      );
    let text: string;
    try {
      const bytes = fs.readFileSync(path);
      if (bytes.byteLength > MAX_BYTES) throw bad(`${name} is over ${MAX_BYTES / 1024} KiB`, path);
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw bad(`${name} cannot be read as UTF-8 text`, path);
    }
    checkTemplate(text, kind, part, (why) => bad(`${name} ${why}`, path));
    overrides[kind] = { ...overrides[kind], [part]: text };
  }
  return overrides;
}

/** Throws `bad(why)` unless the template uses only its kind's variables and renders to something usable. */
function checkTemplate(text: string, kind: MailKind, part: TemplatePart, bad: (why: string) => Error): void {
  const allowed = VARIABLES[kind];
  for (const [, name] of text.matchAll(PLACEHOLDER))
    if (!allowed.includes(name!))
      throw bad(`uses {{${name}}}, which a ${kind} mail does not have (it has ${allowed.join(", ")})`);
  const sample = Object.fromEntries(allowed.map((name) => [name, `sample-${name}`]));
  const rendered = render(text, part, sample);
  if (/\{\{|\}\}/.test(rendered)) throw bad("has a {{ or }} that is not a placeholder such as {{username}}");
  if (part === "subject" && (rendered === "" || /[\r\n]/.test(rendered)))
    throw bad("must render to one line that is not empty");
  if (part !== "subject" && rendered.trim() === "") throw bad("renders to nothing");
  if (allowed.includes("link") && part !== "subject" && !rendered.includes("sample-link"))
    throw bad("leaves out {{link}}, without which the mail is of no use");
}
