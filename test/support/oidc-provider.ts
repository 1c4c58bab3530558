// A real OpenID provider for the sign-in tests: oidc-provider (the certified Node implementation) on a
// loopback port, with the authorization code flow, PKCE required and keys the test holds (so it can rotate
// them). Its login and consent pages are replaced by one step the test steers: sign in as `account` (whose
// claims the test sets), or cancel as a user pressing "Cancel" would (error=access_denied).
import { createServer, type Server } from "node:http";
import {
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";
import Provider, { type Configuration } from "oidc-provider";
import { freePort } from "../ports.ts";

export interface TestAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  name?: string;
}

export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface TestOidcProvider {
  issuer: string;
  port: number;
  /** Who the next sign-in at the provider is; null: the user cancels. */
  account: TestAccount | null;
  /**
   * Set: the token endpoint's ID token is re-signed with these changes to its claims (and with `key`, when
   * given, instead of the provider's own): a provider gone wrong, or a token from somewhere else.
   */
  idTokenEdit: { claims?: JWTPayload; key?: JWK } | null;
  /** A new signing key replaces the current one (served at once in the JWKS; the old one is gone). */
  rotateKeys(): Promise<void>;
  /** The private signing keys in use, newest first: for a test that signs a token itself. */
  signingKeys(): JWK[];
  /** Stops answering (connections refused) until `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function signingKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: crypto.randomUUID(), alg: "RS256", use: "sig" };
}

/** A signing key the provider never published: as a key it rotated away, or someone else's. */
export const unpublishedKey = signingKey;

export async function startOidcProvider(clients: TestClient[], port = freePort()): Promise<TestOidcProvider> {
  const issuer = `http://127.0.0.1:${port}`;
  let keys = [await signingKey()];
  let server: Server | null = null;
  const state: TestOidcProvider = {
    issuer,
    port,
    account: { sub: "alice-sub", email: "alice@example.test", email_verified: true, preferred_username: "alice" },
    idTokenEdit: null,
    async rotateKeys() {
      keys = [await signingKey()];
      await restart();
    },
    signingKeys: () => keys,
    stop: () => close(),
    start: () => listen(),
  };

  const accounts = new Map<string, TestAccount>();
  function provider(): Provider {
    const configuration: Configuration = {
      clients: clients.map((c) => ({ ...c, grant_types: ["authorization_code"], response_types: ["code"] })),
      jwks: { keys },
      pkce: { required: () => true },
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["preferred_username", "name"] },
      // Claims in the ID token itself, as Google and Entra send them (userinfo is not needed to read them).
      conformIdTokenClaims: false,
      findAccount: (_context, id) => {
        const account = accounts.get(id);
        return account && { accountId: id, claims: () => ({ ...account }) };
      },
      features: { devInteractions: { enabled: false } },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    };
    const made = new Provider(issuer, configuration);
    made.use(async (context, next) => {
      await next();
      const edit = state.idTokenEdit;
      const body = context.body as { id_token?: string } | undefined;
      if (edit && context.path === "/token" && typeof body?.id_token === "string")
        context.body = { ...body, id_token: await resign(body.id_token, edit) };
    });
    return made;
  }

  async function resign(token: string, edit: { claims?: JWTPayload; key?: JWK }): Promise<string> {
    const key = edit.key ?? keys[0]!;
    const header = decodeProtectedHeader(token);
    return new SignJWT({ ...decodeJwt(token), ...edit.claims })
      .setProtectedHeader({ typ: header.typ ?? "JWT", alg: "RS256", kid: key.kid! })
      .sign(await importJWK(key, "RS256"));
  }

  let current = provider();
  async function interaction(
    request: Parameters<Provider["interactionDetails"]>[0],
    response: Parameters<Provider["interactionDetails"]>[1],
  ) {
    const details = await current.interactionDetails(request, response);
    const account = state.account;
    if (!account) {
      return current.interactionFinished(
        request,
        response,
        { error: "access_denied", error_description: "The user cancelled." },
        { mergeWithLastSubmission: false },
      );
    }
    if (details.prompt.name === "login") {
      accounts.set(account.sub, account);
      return current.interactionFinished(
        request,
        response,
        { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false },
      );
    }
    const grant = new current.Grant({
      accountId: details.session!.accountId,
      clientId: String(details.params.client_id),
    });
    grant.addOIDCScope(String(details.params.scope));
    return current.interactionFinished(
      request,
      response,
      { consent: { grantId: await grant.save() } },
      { mergeWithLastSubmission: true },
    );
  }

  function listen(): Promise<void> {
    if (server) return Promise.resolve();
    const next = createServer((request, response) => {
      if (/^\/interaction\/[^/?]+/.test(request.url ?? "")) {
        interaction(request, response).catch((error: unknown) => {
          response.statusCode = 500;
          response.end(String(error));
        });
        return;
      }
      current.callback()(request, response);
    });
    server = next;
    return new Promise((resolve) => next.listen(port, "127.0.0.1", () => resolve()));
  }
  function close(): Promise<void> {
    const running = server;
    server = null;
    if (!running) return Promise.resolve();
    running.closeAllConnections();
    return new Promise((resolve) => running.close(() => resolve()));
  }
  async function restart() {
    await close();
    current = provider();
    await listen();
  }

  await listen();
  return state;
}

/**
 * A browser at the provider: follows its redirects (keeping its cookies) from the authorization URL until
 * it sends the browser to `redirectUri`; that callback URL, with its code and state (or error).
 */
export async function visitProvider(authorizationUrl: URL, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  let next = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    const answer = await fetch(next, {
      redirect: "manual",
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join("; ") },
    });
    for (const cookie of answer.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";");
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = answer.headers.get("location");
    if (!location) throw new Error(`the provider answered ${answer.status} without a redirect: ${await answer.text()}`);
    next = new URL(location, next);
    if (next.href.startsWith(redirectUri)) return next;
  }
  throw new Error("the provider redirected more than 10 times");
}
