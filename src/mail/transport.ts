// How a mail leaves svc: through an SMTP server (nodemailer), or, in development and test without
// SVC_SMTP_URL, as one JSON log line. Either way a mail is sent as the outbox holds it: its own
// Message-ID on every attempt, so a mail sent twice (a crash between the send and its record) is
// recognisably one mail to the reader's client.
import { isIP } from "node:net";
import type { MailConfig, SmtpServer } from "../config/index.ts";
import type { OutboxRecord } from "../db/mail-outbox.ts";
import type { LineLogger } from "../observability/log-lines.ts";

/** Sends one mail; resolves once the server took it, rejects with what the server or connection said. */
export interface Transport {
  send(mail: OutboxRecord): Promise<void>;
  /** Closes pooled connections; a send after it opens a new one. */
  close(): void;
}

/** For a server whose certificate the system does not trust (a private CA, a test's own): its CA in PEM. */
export interface TransportOptions {
  ca?: string;
}

/** How long each step may take before the attempt counts as failed (and is retried later). */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** The transport SVC_SMTP_URL names; the log's without it; null when mail is off. */
export async function openTransport(
  config: MailConfig,
  logger: Pick<LineLogger, "info">,
  options: TransportOptions = {},
): Promise<Transport | null> {
  const { transport } = config;
  if (transport.kind === "off") return null;
  if (transport.kind === "log") return logTransport(logger);
  return smtpTransport(transport.server, config.from, options);
}

/** Each mail as one log line: who it is to, its subject and its link, never its body. */
export function logTransport(logger: Pick<LineLogger, "info">): Transport {
  return {
    async send(mail) {
      logger.info(
        {
          mail_id: mail.id,
          kind: mail.kind,
          to: mail.recipient,
          subject: mail.subject,
          link: linkIn(mail.textBody),
          message_id: mail.messageId,
        },
        "mail (SVC_SMTP_URL is not set: logged, not sent)",
      );
    },
    close() {},
  };
}

/** The first link of a mail's text: what a developer needs to follow it. */
export function linkIn(text: string): string | null {
  return /https?:\/\/[^\s<>"]+/.exec(text)?.[0] ?? null;
}

async function smtpTransport(server: SmtpServer, from: string, options: TransportOptions): Promise<Transport> {
  const { createTransport } = await import("nodemailer");
  // One pooled connection: mails go out one after another over it, without a handshake each.
  const mailer = createTransport({
    pool: true,
    maxConnections: 1,
    host: server.host,
    port: server.port,
    secure: server.secure,
    requireTLS: server.requireTls,
    ignoreTLS: !server.secure && !server.requireTls,
    auth: server.user !== null ? { user: server.user, pass: server.password ?? "" } : undefined,
    // The certificate is checked against the host named (SNI only for a name: TLS allows no address there).
    tls: {
      ...(isIP(server.host) ? {} : { servername: server.host }),
      minVersion: "TLSv1.2",
      ...(options.ca ? { ca: options.ca } : {}),
    },
    ...TIMEOUTS,
  });
  return {
    async send(mail) {
      await mailer.sendMail({
        from,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.textBody,
        html: mail.htmlBody,
        messageId: mail.messageId,
        date: new Date(mail.createdAt),
      });
    },
    close: () => mailer.close(),
  };
}
