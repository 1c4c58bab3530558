import { describe, expect, test } from "bun:test";
import { ConfigError, MINIMAL_PASSWORD_COST, parseConfig, PRODUCTION_PASSWORD_COST } from "../src/config/index.ts";

// A secret as `openssl rand -base64 48` makes one: long, and varied.
const SECRET = "3q2+7wAbCdEfGhIjKlMnOpQrStUvWxYz0123456789/+==";

describe("parseConfig", () => {
  test("has the contract's defaults", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      env: "development",
      host: "0.0.0.0",
      port: 8080,
      database: { kind: "sqlite", path: "data/svc.db" },
      graphql: { auth: "required", playground: true, introspection: true },
      logLevel: "info",
      maxBodyBytes: 1048576,
      shutdownGraceMs: 10000,
      releaseCodeAfterMs: 0,
      passwordCost: PRODUCTION_PASSWORD_COST,
    });
    expect(config.jwt.ttlSeconds).toBe(900);
    expect(config.sessions).toEqual({
      refreshTtlSeconds: 30 * 86400,
      maxAgeSeconds: 90 * 86400,
      reuseWindowMs: 10_000,
    });
    expect(config.jwt.ephemeral).toBe(true);
    expect(config.jwt.secret.byteLength).toBe(32);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test("reads every variable", () => {
    const config = parseConfig({
      SVC_ENV: "production",
      SVC_HOST: "127.0.0.1",
      SVC_PORT: "9000",
      SVC_DATABASE_URL: "sqlite::memory:",
      SVC_JWT_SECRET: SECRET,
      SVC_JWT_TTL: "15m",
      SVC_GRAPHQL_AUTH: "mutations",
      SVC_GRAPHQL_PLAYGROUND: "true",
      SVC_GRAPHQL_INTROSPECTION: "true",
      SVC_LOG_LEVEL: "warn",
      SVC_MAX_BODY_BYTES: "4096",
      SVC_SHUTDOWN_GRACE: "30s",
      SVC_RELEASE_CODE_AFTER: "2m",
    });
    expect(config).toMatchObject({
      env: "production",
      host: "127.0.0.1",
      port: 9000,
      database: { kind: "sqlite", path: ":memory:" },
      jwt: { ephemeral: false, ttlSeconds: 900 },
      graphql: { auth: "mutations", playground: true, introspection: true },
      logLevel: "warn",
      maxBodyBytes: 4096,
      shutdownGraceMs: 30000,
      releaseCodeAfterMs: 120_000,
    });
    expect(new TextDecoder().decode(config.jwt.secret)).toBe(SECRET);
  });

  test("reads a PostgreSQL URL with its pool settings", () => {
    const url = "postgres://svc:secret@db.internal:5432/svc";
    expect(parseConfig({ SVC_DATABASE_URL: url }).database).toEqual({
      kind: "postgres",
      url,
      poolMax: 10,
      connectTimeoutS: 5,
      statementTimeoutMs: 5000,
      stalenessMs: 1000,
    });
    const tuned = parseConfig({
      SVC_DATABASE_URL: "postgresql://h/db",
      SVC_DB_POOL_MAX: "40",
      SVC_DB_CONNECT_TIMEOUT: "2s",
      SVC_DB_STATEMENT_TIMEOUT: "1m",
      SVC_DB_STALENESS: "0",
    });
    expect(tuned.database).toMatchObject({
      kind: "postgres",
      poolMax: 40,
      connectTimeoutS: 2,
      statementTimeoutMs: 60000,
      stalenessMs: 0,
    });
    expect(() => parseConfig({ SVC_DATABASE_URL: "postgresql://h/db", SVC_DB_STALENESS: "2m" })).toThrow(
      /SVC_DB_STALENESS/,
    );
  });

  test("never repeats a database password (nor its user) in its error", () => {
    expect(() => parseConfig({ SVC_DATABASE_URL: "mysql://svc:hunter2@h/db" })).toThrow(/mysql:\/\/\*\*\*@h\/db/);
  });

  test("reads the hardening settings, closed and cautious by default", () => {
    expect(parseConfig({})).toMatchObject({
      trustProxy: 0,
      corsOrigins: [],
      loginThrottle: {
        maxFailures: 5,
        backoffBaseMs: 1000,
        backoffMaxMs: 900_000,
        clientMaxFailures: 100,
        clientWindowMs: 900_000,
      },
    });
    const tuned = parseConfig({
      SVC_TRUST_PROXY: "2",
      SVC_CORS_ORIGINS: "https://app.example.com, http://localhost:5173",
      SVC_LOGIN_MAX_FAILURES: "10",
      SVC_LOGIN_BACKOFF_BASE: "2s",
      SVC_LOGIN_BACKOFF_MAX: "1h",
      SVC_LOGIN_CLIENT_MAX_FAILURES: "500",
      SVC_LOGIN_CLIENT_WINDOW: "1h",
    });
    expect(tuned).toMatchObject({
      trustProxy: 2,
      corsOrigins: ["https://app.example.com", "http://localhost:5173"],
      loginThrottle: {
        maxFailures: 10,
        backoffBaseMs: 2000,
        backoffMaxMs: 3_600_000,
        clientMaxFailures: 500,
        clientWindowMs: 3_600_000,
      },
    });
    expect(parseConfig({ SVC_TRUST_PROXY: "true" }).trustProxy).toBe(1);
  });

  test("turns the playground and introspection off in production by default", () => {
    expect(parseConfig({ SVC_ENV: "production", SVC_JWT_SECRET: SECRET }).graphql).toEqual({
      auth: "required",
      playground: false,
      introspection: false,
    });
  });

  test("hashes at production cost unless a test process asks for the minimal one", () => {
    expect(parseConfig({}).passwordCost).toEqual(PRODUCTION_PASSWORD_COST);
    expect(parseConfig({ SVC_ENV: "test" }).passwordCost).toEqual(PRODUCTION_PASSWORD_COST);
    expect(parseConfig({ SVC_ENV: "test", SVC_PASSWORD_COST: "minimal" }).passwordCost).toEqual(MINIMAL_PASSWORD_COST);
  });

  test("bounds the Idempotency-Keys a caller holds: 1000 unless SVC_IDEMPOTENCY_KEYS_PER_CALLER says otherwise", () => {
    expect(parseConfig({}).idempotencyKeysPerCaller).toBe(1000);
    expect(parseConfig({ SVC_IDEMPOTENCY_KEYS_PER_CALLER: "50" }).idempotencyKeysPerCaller).toBe(50);
  });

  test("sign-up: open, invitations for 7 days, 30 attempts per client an hour (10,000 in development), unless SVC_SIGNUP_* say otherwise", () => {
    expect(parseConfig({ SVC_ENV: "production", SVC_JWT_SECRET: SECRET }).signup).toEqual({
      mode: "open",
      invitationTtlSeconds: 7 * 86400,
      clientMax: 30,
      clientWindowMs: 3_600_000,
    });
    expect(parseConfig({ SVC_ENV: "test" }).signup.clientMax).toBe(30);
    expect(parseConfig({}).signup.clientMax).toBe(10_000);
    expect(parseConfig({ SVC_ENV: "development", SVC_SIGNUP_CLIENT_MAX: "30" }).signup.clientMax).toBe(30);
    expect(
      parseConfig({
        SVC_SIGNUP: "invite",
        SVC_INVITATION_TTL: "30d",
        SVC_SIGNUP_CLIENT_MAX: "5",
        SVC_SIGNUP_CLIENT_WINDOW: "10m",
      }).signup,
    ).toEqual({ mode: "invite", invitationTtlSeconds: 30 * 86400, clientMax: 5, clientWindowMs: 600_000 });
    expect(parseConfig({ SVC_SIGNUP: "closed" }).signup.mode).toBe("closed");
    const refused = (env: Record<string, string>) => {
      try {
        parseConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refused({ SVC_SIGNUP: "Open" })).toBe('SVC_SIGNUP: one of open, invite, closed (got "Open")');
    expect(refused({ SVC_SIGNUP: "invite-only" })).toBe('SVC_SIGNUP: one of open, invite, closed (got "invite-only")');
    expect(refused({ SVC_INVITATION_TTL: "30s" })).toStartWith("SVC_INVITATION_TTL: a duration");
    expect(refused({ SVC_INVITATION_TTL: "366d" })).toStartWith("SVC_INVITATION_TTL: a duration");
    expect(refused({ SVC_SIGNUP_CLIENT_MAX: "0" })).toBe(
      'SVC_SIGNUP_CLIENT_MAX: an integer from 1 to 1000000 (got "0")',
    );
    expect(refused({ SVC_SIGNUP_CLIENT_WINDOW: "8d" })).toStartWith("SVC_SIGNUP_CLIENT_WINDOW: a duration");
  });

  test("honours PORT when SVC_PORT is unset, and prefers SVC_PORT", () => {
    expect(parseConfig({ PORT: "3000" }).port).toBe(3000);
    expect(parseConfig({ PORT: "3000", SVC_PORT: "4000" }).port).toBe(4000);
  });

  test.each([
    ["SVC_ENV", { SVC_ENV: "staging" }, "one of development, test, production"],
    ["SVC_PORT", { SVC_PORT: "eighty" }, "an integer from 0 to 65535"],
    ["SVC_PORT", { SVC_PORT: "70000" }, "an integer from 0 to 65535"],
    ["PORT", { PORT: "-1" }, "an integer from 0 to 65535"],
    ["SVC_DATABASE_URL", { SVC_DATABASE_URL: "mysql://x" }, "sqlite:<path>, sqlite::memory: or postgres://"],
    ["SVC_DATABASE_URL", { SVC_DATABASE_URL: "sqlite:" }, "sqlite:<path>, sqlite::memory: or postgres://"],
    ["SVC_DATABASE_URL", { SVC_DATABASE_URL: "postgres://" }, "sqlite:<path>, sqlite::memory: or postgres://"],
    ["SVC_DB_POOL_MAX", { SVC_DB_POOL_MAX: "0" }, "an integer from 1 to 1000"],
    ["SVC_DB_CONNECT_TIMEOUT", { SVC_DB_CONNECT_TIMEOUT: "soon" }, "a duration such as"],
    ["SVC_DB_STATEMENT_TIMEOUT", { SVC_DB_STATEMENT_TIMEOUT: "0s" }, "a duration such as"],
    ["SVC_JWT_SECRET", { SVC_JWT_SECRET: "short" }, "at least 32 bytes"],
    ["SVC_JWT_SECRET", { SVC_ENV: "production" }, "required in production"],
    ["SVC_JWT_SECRET", { SVC_ENV: "production", SVC_JWT_SECRET: " ".repeat(32) }, "openssl rand -base64 48"],
    ["SVC_JWT_SECRET", { SVC_ENV: "production", SVC_JWT_SECRET: "a".repeat(64) }, "at least 16 distinct"],
    ["SVC_JWT_SECRET", { SVC_JWT_SECRET: "abcdefghijklmno".repeat(4) }, "at least 16 distinct"],
    ["SVC_JWT_TTL", { SVC_JWT_TTL: "1 hour" }, "a duration such as"],
    ["SVC_JWT_TTL", { SVC_JWT_TTL: "0s" }, "a duration such as"],
    ["SVC_GRAPHQL_AUTH", { SVC_GRAPHQL_AUTH: "sometimes" }, "one of required, mutations, off"],
    ["SVC_GRAPHQL_PLAYGROUND", { SVC_GRAPHQL_PLAYGROUND: "yes" }, "true or false"],
    ["SVC_GRAPHQL_INTROSPECTION", { SVC_GRAPHQL_INTROSPECTION: "1" }, "true or false"],
    ["SVC_LOG_LEVEL", { SVC_LOG_LEVEL: "loud" }, "one of debug, info, warn, error, silent"],
    ["SVC_LOG_PROBES", { SVC_LOG_PROBES: "no" }, "true or false"],
    ["SVC_MAX_BODY_BYTES", { SVC_MAX_BODY_BYTES: "10" }, "an integer from 1024"],
    ["SVC_SHUTDOWN_GRACE", { SVC_SHUTDOWN_GRACE: "forever" }, "a duration such as"],
    ["SVC_RELEASE_CODE_AFTER", { SVC_RELEASE_CODE_AFTER: "500ms" }, "from 0s to 86400s"],
    ["SVC_RELEASE_CODE_AFTER", { SVC_RELEASE_CODE_AFTER: "2d" }, "from 0s to 86400s"],
    ["SVC_IDEMPOTENCY_KEYS_PER_CALLER", { SVC_IDEMPOTENCY_KEYS_PER_CALLER: "0" }, "an integer from 1 to 100000"],
    ["SVC_TRUST_PROXY", { SVC_TRUST_PROXY: "yes" }, "false, true (one proxy) or the number of proxies"],
    [
      "SVC_CORS_ORIGINS",
      { SVC_CORS_ORIGINS: "https://ok.example, not an origin" },
      "a comma-separated list of origins",
    ],
    ["SVC_CORS_ORIGINS", { SVC_CORS_ORIGINS: "https://app.example.com/path" }, "a comma-separated list of origins"],
    ["SVC_LOGIN_MAX_FAILURES", { SVC_LOGIN_MAX_FAILURES: "0" }, "an integer from 1 to 1000"],
    ["SVC_LOGIN_BACKOFF_BASE", { SVC_LOGIN_BACKOFF_BASE: "1 second" }, "a duration such as"],
    ["SVC_LOGIN_BACKOFF_MAX", { SVC_LOGIN_BACKOFF_MAX: "2d" }, "a duration such as"],
    ["SVC_LOGIN_CLIENT_MAX_FAILURES", { SVC_LOGIN_CLIENT_MAX_FAILURES: "many" }, "an integer from 1"],
    ["SVC_LOGIN_CLIENT_WINDOW", { SVC_LOGIN_CLIENT_WINDOW: "-1s" }, "a duration such as"],
    ["SVC_REFRESH_TTL", { SVC_REFRESH_TTL: "30s" }, "a duration such as"],
    ["SVC_REFRESH_TTL", { SVC_JWT_TTL: "2h", SVC_REFRESH_TTL: "1h" }, "no shorter than SVC_JWT_TTL (7200s)"],
    ["SVC_SESSION_MAX_AGE", { SVC_SESSION_MAX_AGE: "forever" }, "a duration such as"],
    ["SVC_REFRESH_REUSE_WINDOW", { SVC_REFRESH_REUSE_WINDOW: "10m" }, "from 0s to 300s"],
    ["SVC_PASSWORD_COST", { SVC_PASSWORD_COST: "low" }, "one of production, minimal"],
    ["SVC_PASSWORD_COST", { SVC_PASSWORD_COST: "minimal" }, "minimal only with SVC_ENV=test"],
    [
      "SVC_PASSWORD_COST",
      { SVC_ENV: "production", SVC_JWT_SECRET: "x7Kp2mQ9vR4tW8yB1nC5fH3jL6sD0gZa", SVC_PASSWORD_COST: "minimal" },
      "minimal only with SVC_ENV=test",
    ],
  ])("refuses a bad %s with one line naming it and what it accepts", (variable, env, accepts) => {
    let caught: unknown;
    try {
      parseConfig(env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const message = (caught as ConfigError).message;
    expect(message).toStartWith(`${variable}: `);
    expect(message).toContain(accepts);
    expect(message).not.toContain("\n");
  });

  const DURATIONS = [
    "SVC_DB_CONNECT_TIMEOUT",
    "SVC_DB_STATEMENT_TIMEOUT",
    "SVC_JWT_TTL",
    "SVC_REFRESH_TTL",
    "SVC_SESSION_MAX_AGE",
    "SVC_REFRESH_REUSE_WINDOW",
    "SVC_SHUTDOWN_GRACE",
    "SVC_RELEASE_CODE_AFTER",
    "SVC_LOGIN_BACKOFF_BASE",
    "SVC_LOGIN_BACKOFF_MAX",
    "SVC_LOGIN_CLIENT_WINDOW",
    "SVC_RESET_CODE_TTL",
    "SVC_AUDIT_RETENTION",
    "SVC_IDEMPOTENCY_TTL",
  ];
  test.each(
    DURATIONS.flatMap((variable) =>
      ["9999999999999s", "9999999999999d", "9".repeat(400)].map((huge) => [variable, huge]),
    ),
  )("refuses a huge %s (%s) at start-up, naming it and its range", (variable, huge) => {
    expect(() => parseConfig({ [variable]: huge })).toThrow(
      new RegExp(`^${variable}: a duration such as .* from \\d+s to \\d+s`),
    );
  });

  test("never repeats a refused secret in its message", () => {
    const weak = "ab".repeat(32);
    expect(() => parseConfig({ SVC_ENV: "production", SVC_JWT_SECRET: weak })).toThrow(/2 distinct bytes/);
    try {
      parseConfig({ SVC_ENV: "production", SVC_JWT_SECRET: weak });
    } catch (error) {
      expect((error as Error).message).not.toContain(weak);
    }
  });

  test("takes a secret of 16 distinct bytes or more", () => {
    expect(parseConfig({ SVC_ENV: "production", SVC_JWT_SECRET: "abcdefghijklmnop".repeat(2) }).jwt.ephemeral).toBe(
      false,
    );
  });
});

describe("TLS, the operations listener and the metrics token", () => {
  test("are off by default", () => {
    expect(parseConfig({})).toMatchObject({ tls: null, opsAddress: null, metricsToken: null });
  });

  test("read SVC_TLS_CERT and SVC_TLS_KEY as a pair of paths (the files are read at start-up)", () => {
    const config = parseConfig({ SVC_TLS_CERT: "/etc/svc/fullchain.pem", SVC_TLS_KEY: "/etc/svc/privkey.pem" });
    expect(config.tls).toEqual({ certPath: "/etc/svc/fullchain.pem", keyPath: "/etc/svc/privkey.pem" });
  });

  test("refuse one TLS variable without the other, naming both", () => {
    const one = (env: Record<string, string>) => () => parseConfig(env);
    expect(one({ SVC_TLS_CERT: "/c.pem" })).toThrow(
      new ConfigError("SVC_TLS_KEY", "a PEM key file, required when SVC_TLS_CERT is set (both or neither)", ""),
    );
    expect(one({ SVC_TLS_KEY: "/k.pem" })).toThrow(
      new ConfigError("SVC_TLS_CERT", "a PEM certificate file, required when SVC_TLS_KEY is set (both or neither)", ""),
    );
  });

  test.each([
    ["127.0.0.1:9090", { host: "127.0.0.1", port: 9090 }],
    ["[::1]:9090", { host: "::1", port: 9090 }],
    ["ops.internal:0", { host: "ops.internal", port: 0 }],
  ])("reads SVC_OPS_ADDRESS %s", (value, address) => {
    expect(parseConfig({ SVC_OPS_ADDRESS: value }).opsAddress).toEqual(address);
  });

  test.each(["9090", "127.0.0.1", "127.0.0.1:", ":9090", "::1:9090", "127.0.0.1:65536", "127.0.0.1:90x", "a b:9090"])(
    "refuses SVC_OPS_ADDRESS %p",
    (value) => {
      expect(() => parseConfig({ SVC_OPS_ADDRESS: value })).toThrow(
        new ConfigError("SVC_OPS_ADDRESS", "host:port, such as 127.0.0.1:9090 or [::1]:9090", value),
      );
    },
  );

  test("refuses SVC_OPS_ADDRESS on the public listener's port", () => {
    expect(() => parseConfig({ SVC_PORT: "8443", SVC_OPS_ADDRESS: "127.0.0.1:8443" })).toThrow(
      new ConfigError("SVC_OPS_ADDRESS", "a port other than the public listener's (8443)", "127.0.0.1:8443"),
    );
    expect(() => parseConfig({ SVC_OPS_ADDRESS: "127.0.0.1:8080" })).toThrow(
      /other than the public listener's \(8080\)/,
    );
  });

  test("takes a metrics token of 24 printable characters or more, and never repeats a refused one", () => {
    expect(parseConfig({ SVC_METRICS_TOKEN: "x".repeat(24) }).metricsToken).toBe("x".repeat(24));
    for (const token of ["x".repeat(23), `${"x".repeat(24)} y`, `${"x".repeat(24)}é`]) {
      expect(() => parseConfig({ SVC_METRICS_TOKEN: token })).toThrow(
        new ConfigError(
          "SVC_METRICS_TOKEN",
          "at least 24 printable ASCII characters without spaces; make one with: openssl rand -base64 32",
          `${token.length} characters`,
        ),
      );
    }
  });
});

describe("a database URL svc cannot read", () => {
  // The password may hold "@", "/" or ":" written raw (a generated one often does): the error names the variable and
  // shows the URL's shape, never any part of the password.
  test.each([
    ["SVC_DATABASE_URL", "postgres://svc:p@ss:w/rd-secret@db:5432/svc"],
    ["SVC_DATABASE_URL", "postgres://svc:pa/ss-secret@db/svc"],
    ["SVC_BACKUP_TO", "postgres://svc:p@ss:w/rd-secret@db:5432/svc"],
  ])("%s=%s: one ConfigError naming the variable, without the password", (name, url) => {
    let error: unknown;
    try {
      parseConfig({ [name]: url });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toStartWith(`${name}: `);
    for (const part of ["ss:w", "rd-secret", "ss-secret", "p@ss", "pa/ss"]) expect(message).not.toContain(part);
  });
});
