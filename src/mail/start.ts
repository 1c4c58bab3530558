// The mail sender as `svc serve` runs it: the transport SVC_SMTP_URL names (or the log), and the loop.
// Loaded by serve.ts only while mail is on.
import type { Config } from "../config/index.ts";
import type { Store } from "../db/store.ts";
import type { LineLogger } from "../observability/log-lines.ts";
import { createSender, type MailSender } from "./sender.ts";
import { openTransport } from "./transport.ts";

/** Starts sending the outbox's mails; null when mail is off. */
export async function startMail(config: Config, store: Store, logger: LineLogger): Promise<MailSender | null> {
  const transport = await openTransport(config.mail, logger);
  if (!transport) return null;
  const sender = createSender({ store, transport, logger, secret: config.jwt.secret });
  sender.start();
  return sender;
}
