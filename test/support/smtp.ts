// A real SMTP server for the mail tests: smtp-server on a free loopback port, with STARTTLS (a
// self-signed certificate made by openssl) and AUTH (one user, its password checked), keeping every
// message it accepts parsed by mailparser. It can be told to refuse (a 451 at RCPT or DATA) and later
// to accept again, as a mail server that is down for a while.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerSession } from "smtp-server";

export const SMTP_USER = "mailer";
export const SMTP_PASSWORD = "s3cret-smtp-pass";

export interface Received {
  mail: ParsedMail;
  /** The envelope's recipients, as RCPT TO named them. */
  to: string[];
  from: string;
  /** STARTTLS was in force when the message came. */
  secure: boolean;
  /** The user AUTH signed in as; null without AUTH. */
  user: string | null;
}

export interface TestSmtp {
  port: number;
  /** The server's certificate in PEM: the client's CA for it. */
  ca: string;
  /** SVC_SMTP_URL for this server (STARTTLS required, with the user and password). */
  url: string;
  received: Received[];
  /** From now on answer 451 at this step, until accept(); how many were refused so far. */
  refuse(at: "rcpt" | "data"): void;
  accept(): void;
  refusals(): number;
  close(): Promise<void>;
}

function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "svc-smtp-"));
  try {
    const run = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ],
      { cwd: dir, stderr: "pipe" },
    );
    if (run.exitCode !== 0) throw new Error(`openssl: ${run.stderr.toString()}`);
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let material: { key: string; cert: string } | undefined;

/** Starts the server; `auth: false` takes mail without AUTH and without STARTTLS (smtp://…?tls=off). */
export async function startSmtp(options: { auth?: boolean } = {}): Promise<TestSmtp> {
  const auth = options.auth ?? true;
  material ??= selfSigned();
  const received: Received[] = [];
  let refusing: "rcpt" | "data" | null = null;
  let refused = 0;
  const refusal = () => {
    refused++;
    return Object.assign(new Error("4.3.0 Try again later"), { responseCode: 451 });
  };
  const server = new SMTPServer({
    key: material.key,
    cert: material.cert,
    secure: false,
    hideSTARTTLS: !auth,
    authOptional: !auth,
    authMethods: ["PLAIN", "LOGIN"],
    // Without TLS the server would refuse AUTH: the client must have done STARTTLS first.
    allowInsecureAuth: false,
    disableReverseLookup: true,
    logger: false,
    onAuth(credentials, _session, callback) {
      if (credentials.username === SMTP_USER && credentials.password === SMTP_PASSWORD)
        return callback(null, { user: credentials.username });
      callback(Object.assign(new Error("5.7.8 Authentication failed"), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      callback(refusing === "rcpt" ? refusal() : undefined);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (refusing === "data") return callback(refusal());
        const envelope = session.envelope;
        simpleParser(Buffer.concat(chunks)).then(
          (mail) => {
            received.push({
              mail,
              to: envelope.rcptTo.map((r) => r.address),
              from: envelope.mailFrom ? envelope.mailFrom.address : "",
              secure: session.secure,
              user: typeof session.user === "string" ? session.user : null,
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    ca: material.cert,
    url: auth
      ? `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`
      : `smtp://127.0.0.1:${port}?tls=off`,
    received,
    refuse(at) {
      refusing = at;
    },
    accept() {
      refusing = null;
    },
    refusals: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
