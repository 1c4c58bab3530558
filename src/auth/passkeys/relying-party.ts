// Who the passkeys are for: the relying party's id (a host name) and the origin a browser's answer must
// come from, both from SVC_PUBLIC_URL (http://localhost:<port> in development without it).
import type { Config } from "../../config/index.ts";

export interface RelyingParty {
  /** The host name of the public URL: a passkey made for it works on it and its subdomains' pages only. */
  id: string;
  /** The public URL's origin, as a browser's clientDataJSON names it. */
  origin: string;
  /** What the browser shows the user while making a passkey (SVC_MAIL_PRODUCT_NAME). */
  name: string;
}

export function relyingParty(mail: Config["mail"]): RelyingParty {
  const url = new URL(mail.publicUrl);
  return { id: url.hostname, origin: url.origin, name: mail.productName };
}
