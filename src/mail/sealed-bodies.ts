// A mail's bodies as the outbox keeps them: sealed (AES-256-GCM, lib/sealing.ts) under the server's secret,
// SVC_JWT_SECRET, because most carry a one-time token in a link: a copy of the database alone (a backup, a
// read-only login) yields no working link. The composer seals them, the sender opens them just before
// sending, and the outbox blanks them once a mail is sent (db/mail-outbox.ts).
import { sealUnderNow, unsealUnder } from "../lib/sealing.ts";

const LABEL = "svc mail body";

const keyText = (secret: Uint8Array) => Buffer.from(secret).toString("base64url");

interface Bodies {
  textBody: string;
  htmlBody: string;
}

/** The mail with each body sealed. */
export function sealBodies<T extends Bodies>(mail: T, secret: Uint8Array): T {
  const key = keyText(secret);
  return {
    ...mail,
    textBody: sealUnderNow(LABEL, key, mail.textBody),
    htmlBody: sealUnderNow(LABEL, key, mail.htmlBody),
  };
}

/** The mail with its bodies opened; null when they were not sealed under this secret (or were altered). */
export async function openBodies<T extends Bodies>(mail: T, secret: Uint8Array): Promise<T | null> {
  const [text, html] = await Promise.all(
    [mail.textBody, mail.htmlBody].map((body) => unsealUnder(LABEL, keyText(secret), body)),
  );
  if (typeof text !== "string" || typeof html !== "string") return null;
  return { ...mail, textBody: text, htmlBody: html };
}
