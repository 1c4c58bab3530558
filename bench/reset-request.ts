// `bun run bench:reset-request`: can a stranger tell, by timing, whether an account has an address? Two
// requests any client may make are measured for an address an account has and one no account has:
//
// - POST auth/password-reset/request (an active account gets a link);
// - POST auth/email/verify/resend by {email} with SVC_EMAIL_VERIFICATION=required (an unverified account
//   gets a link).
//
// As svc runs them: in process on SQLite (the socket adds the same to both), with the mail sender started
// and delivering through a real SMTP server (test/support/smtp.ts: STARTTLS and AUTH), so the sending's
// work lands where it would. Interleaved pairs, the order alternating, spaced `--gap-ms` apart (20 ms: a
// prober waiting for each answer), each address asked for once (as an attacker probing a list would);
// prints the medians and their difference. test/api/password-reset-mail.test.ts and
// test/api/email-verification-required.test.ts prove both paths make the same store calls; this measures
// that they take the same time.
import { createApp } from "../src/app.ts";
import { type Config, mail as mailConfig, MINIMAL_PASSWORD_COST, parseConfig } from "../src/config/index.ts";
import { openSqliteStore } from "../src/db/sqlite/store.ts";
import { createSender } from "../src/mail/sender.ts";
import { openTransport } from "../src/mail/transport.ts";
import { createLoggers } from "../src/observability/log.ts";
import { startSmtp } from "../test/support/smtp.ts";

const option = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const PAIRS = option("pairs", 200);
const GAP_MS = option("gap-ms", 20);
const WARM = 50;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

const smtp = await startSmtp();
const base = parseConfig({
  SVC_ENV: "test",
  SVC_JWT_SECRET: "bench-secret: 0123456789 ABCDEFGHIJ klmnop",
  SVC_DATABASE_URL: "sqlite::memory:",
});
const smtpMail = mailConfig(
  { SVC_SMTP_URL: smtp.url, SVC_MAIL_FROM: "svc@example.com", SVC_PUBLIC_URL: "https://svc.example.com" },
  true,
  8080,
);

/** An app on SQLite with mail through the test SMTP server, its sender running, its throttles out of the way. */
async function mailingApp(verification: Config["mail"]["verification"]) {
  const config: Config = {
    ...base,
    passwordCost: MINIMAL_PASSWORD_COST,
    // Each request comes from an address of its own (X-Forwarded-For), as a prober spreading its requests.
    trustProxy: 1,
    loginThrottle: {
      maxFailures: 1000,
      backoffBaseMs: 1,
      backoffMaxMs: 1,
      clientMaxFailures: 1_000_000,
      clientWindowMs: 1000,
    },
    signup: { ...base.signup, clientMax: 1_000_000 },
    mail: { ...smtpMail, verification },
  };
  const store = openSqliteStore(":memory:");
  const app = createApp({ config, store, loggers: createLoggers("silent") });
  const transport = await openTransport(config.mail, quiet, { ca: smtp.ca });
  const sender = createSender({ store, transport: transport!, logger: quiet, secret: config.jwt.secret });
  sender.start();
  let client = 0;
  const post = (path: string, body: unknown) => {
    client++;
    return app.handle(
      new Request(`http://localhost${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-forwarded-for": `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`,
        },
        body: JSON.stringify(body),
      }),
    );
  };
  for (let i = 0; i < PAIRS + WARM; i++) {
    const reply = await post("/svc-api/v1/users/create", {
      username: `user${i}`,
      email: `user${i}@example.com`,
      password: "correct horse battery",
    });
    if (reply.status !== 201) throw new Error(`sign-up: ${reply.status} ${await reply.text()}`);
  }
  // The sign-ups' mails out of the way before measuring.
  while ((await store.mail.pending()) > 0) await Bun.sleep(50);
  return { post, sender };
}

/** Median time of `path` for addresses accounts have against addresses none has, interleaved. */
async function measure(name: string, path: string, post: (path: string, body: unknown) => Promise<Response>) {
  async function ask(email: string): Promise<number> {
    const started = performance.now();
    const reply = await post(path, { email });
    await reply.text();
    const ms = performance.now() - started;
    if (reply.status !== 202) throw new Error(`${name}: expected 202, got ${reply.status}`);
    await Bun.sleep(GAP_MS);
    return ms;
  }
  for (let i = 0; i < WARM; i++) {
    await ask(`user${PAIRS + i}@example.com`);
    await ask(`warm${i}@example.com`);
  }
  const known: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    // Alternate which goes first, so drift in the machine's speed falls on both alike.
    if (i % 2 === 0) {
      known.push(await ask(`user${i}@example.com`));
      unknown.push(await ask(`nobody${i}@example.com`));
    } else {
      unknown.push(await ask(`nobody${i}@example.com`));
      known.push(await ask(`user${i}@example.com`));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const [k, u] = [median(known), median(unknown)];
  const us = (x: number) => `${(x * 1000).toFixed(0)} µs`;
  console.log(`${name}, ${PAIRS} interleaved pairs ${GAP_MS} ms apart, sender running, SMTP:`);
  console.log(`  existing account:  median ${us(k)}`);
  console.log(`  unknown address:   median ${us(u)}`);
  console.log(`  difference: ${((Math.abs(u - k) / Math.max(u, k)) * 100).toFixed(1)} % (of the larger)`);
}

const delivered = smtp.received.length;
const resets = await mailingApp("optional");
await measure("password-reset/request", "/svc-api/v1/auth/password-reset/request", resets.post);
await resets.sender.stop();
const resends = await mailingApp("required");
await measure("email/verify/resend by address (required)", "/svc-api/v1/auth/email/verify/resend", resends.post);
await resends.sender.stop();
console.log(`  (${smtp.received.length - delivered} mails delivered through SMTP)`);
await smtp.close();
process.exit(0);
